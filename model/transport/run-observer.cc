/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-observer.h"

#include <algorithm>
#include <vector>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RunObserver);

namespace
{
/// The registered observers: process state, as ns-3's Config defaults are,
/// filled only by a program that asks for recordings.
std::vector<Ptr<RunObserver>>&
Observers()
{
    static std::vector<Ptr<RunObserver>> observers;
    return observers;
}
} // namespace

TypeId
RunObserver::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RunObserver").SetParent<Object>().SetGroupName("GpuFabric");
    return tid;
}

void
RunObserver::Add(Ptr<RunObserver> observer)
{
    auto& all = Observers();
    if (observer && std::find(all.begin(), all.end(), observer) == all.end())
    {
        all.push_back(observer);
    }
}

void
RunObserver::Remove(Ptr<RunObserver> observer)
{
    auto& all = Observers();
    all.erase(std::remove(all.begin(), all.end(), observer), all.end());
}

void
RunObserver::Announce(Ptr<Object> object)
{
    // a copy: an observer may remove itself
    const std::vector<Ptr<RunObserver>> all = Observers();
    for (const auto& o : all)
    {
        o->Observe(object);
    }
}

} // namespace ns3
