/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The Transport contract on its own: a backend that is neither the packet
 * nor the flow level reports failures through it, and the collective
 * executor hears them without knowing the backend.
 */
#include "ns3/collective-algorithms.h"
#include "ns3/collective-application.h"
#include "ns3/fabric-error.h"
#include "ns3/fabric-routing-table.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/transport.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// Delivers every message after a fixed time, except those from one rank,
/// which it gives up (as a backend does on a dead end).
class LossyTransport : public Transport
{
  public:
    LossyTransport(uint32_t ranks, uint32_t deadRank)
        : m_ranks(ranks),
          m_dead(deadRank)
    {
    }

    uint32_t GetNRanks() const override
    {
        return m_ranks;
    }

    Totals GetTotals() const override
    {
        return m_totals;
    }

  protected:
    uint64_t DoSend(uint32_t src, uint32_t dst, uint64_t bytes, Delivery delivery) override
    {
        RequireRanks(src, dst);
        const uint64_t id = m_nextId++;
        ++m_totals.messagesSent;
        m_totals.bytesSent += bytes;
        if (src == m_dead)
        {
            MessageReport r;
            r.messageId = id;
            r.src = src;
            r.dst = dst;
            r.bytes = bytes;
            r.sent = Simulator::Now();
            r.reason = "the test's dead rank";
            r.failedAt = Simulator::Now() + MicroSeconds(1);
            m_failing.push_back(delivery);
            Simulator::Schedule(MicroSeconds(1),
                                &LossyTransport::Fail,
                                this,
                                m_failing.size() - 1,
                                r);
            return id;
        }
        m_deliveries.push_back(delivery);
        Simulator::Schedule(MicroSeconds(1),
                            &LossyTransport::Deliver,
                            this,
                            m_deliveries.size() - 1,
                            bytes);
        return id;
    }

  private:
    void Fail(size_t i, MessageReport r)
    {
        ReportFailure(r, m_failing[i]);
    }

    void Deliver(size_t i, uint64_t bytes)
    {
        ++m_totals.messagesDelivered;
        m_totals.bytesDelivered += bytes;
        m_deliveries[i].Notify();
    }

    uint32_t m_ranks;
    uint32_t m_dead;
    uint64_t m_nextId{0};
    Totals m_totals;
    std::vector<Delivery> m_deliveries;
    std::vector<Delivery> m_failing;
};

/// A 4 KiB ring AllReduce over every rank of \p transport, run to its end.
Ptr<CollectiveRun>
RunRingAllReduce(Ptr<Transport> transport)
{
    Ptr<CollectiveRun> run = CreateObject<CollectiveRun>();
    run->Setup(RingAllReduce(transport->GetNRanks(), 4096), transport);
    for (uint32_t r = 0; r < transport->GetNRanks(); ++r)
    {
        run->StartRank(r);
    }
    Simulator::Run();
    return run;
}

} // namespace

TEST(TransportContract, TheTypeIdIsNamedAfterTheInterfaceAndOwnsMessageFailed)
{
    TypeId tid;
    ASSERT_TRUE(TypeId::LookupByNameFailSafe("ns3::Transport", &tid));
    EXPECT_EQ(tid, Transport::GetTypeId());
    TypeId::TraceSourceInformation info;
    EXPECT_TRUE(tid.LookupTraceSourceByName("MessageFailed", &info) != nullptr);
}

TEST(TransportContract, AnyBackendsFailureReachesTheCollectiveExecutor)
{
    const uint32_t n = 4;
    Ptr<LossyTransport> transport = CreateObject<LossyTransport>(n, 2);
    std::vector<Transport::MessageReport> heard;
    transport->TraceConnectWithoutContext(
        "MessageFailed",
        MakeCallback(+[](std::vector<Transport::MessageReport>* out,
                         const Transport::MessageReport& r) {
            out->push_back(r);
        }).Bind(&heard));
    Ptr<CollectiveRun> run = RunRingAllReduce(transport);
    // Rank r's step-s send waits for its step s-1 receive from r-1. Rank 3
    // never hears from 2, so it sends step 0 only, rank 0 steps 0-1, rank 1
    // steps 0-2 and rank 2 steps 0-3: four messages of rank 2 fail.
    ASSERT_EQ(transport->GetFailedMessages(), 4U);
    ASSERT_EQ(heard.size(), 4U);
    for (const auto& r : heard)
    {
        EXPECT_EQ(r.src, 2U);
        EXPECT_EQ(r.dst, 3U);
    }
    EXPECT_EQ(transport->GetFailureReports()[0].reason, "the test's dead rank");
    EXPECT_EQ(transport->GetTotals().messagesDelivered, 1U + 2U + 3U);
    EXPECT_TRUE(run->IsFailed());
    EXPECT_FALSE(run->IsComplete());
    EXPECT_NE(run->GetFailureReport().find("of rank 2 (send to rank 3) failed"), std::string::npos)
        << run->GetFailureReport();
    EXPECT_NE(run->GetFailureReport().find("the test's dead rank"), std::string::npos);
    run->Dispose();
    Simulator::Destroy();
}

TEST(TransportContract, TheExecutorHearsFailuresThroughItsSinkWithoutTraceSources)
{
    // made with Create<> (no TypeId, so no trace source can be connected):
    // the failure reaches the collective through the message's sink
    const uint32_t n = 4;
    Ptr<LossyTransport> transport = Create<LossyTransport>(n, 0);
    Ptr<CollectiveRun> run = RunRingAllReduce(transport);
    EXPECT_EQ(transport->GetFailedMessages(), 4U);
    EXPECT_TRUE(run->IsFailed());
    EXPECT_NE(run->GetFailureReport().find("of rank 0 (send to rank 1) failed"), std::string::npos)
        << run->GetFailureReport();
    run->Dispose();
    Simulator::Destroy();
}

TEST(TransportContract, TheRunsSeedChoosesTheFlowLabelsAndTheDefaultKeepsTheOldOnes)
{
    // ns-3's default seed and run keep the labels of earlier versions (and
    // so every ECMP figure stated before the seed chose them)
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    EXPECT_EQ(Transport::FlowLabelSalt(1, 1), 0x6dU);
    Ptr<LossyTransport> first = CreateObject<LossyTransport>(64, 64);
    Ptr<LossyTransport> again = CreateObject<LossyTransport>(64, 64);
    RngSeedManager::SetRun(2);
    Ptr<LossyTransport> run2 = CreateObject<LossyTransport>(64, 64);
    RngSeedManager::SetSeed(7);
    Ptr<LossyTransport> seed7 = CreateObject<LossyTransport>(64, 64);
    RngSeedManager::SetRun(1);
    RngSeedManager::SetSeed(1);
    EXPECT_EQ(first->GetFlowLabelSalt(), 0x6dU);
    EXPECT_NE(run2->GetFlowLabelSalt(), 0x6dU);
    EXPECT_NE(seed7->GetFlowLabelSalt(), run2->GetFlowLabelSalt());
    uint32_t differ2 = 0;
    uint32_t differ7 = 0;
    for (uint32_t s = 0; s < 8; ++s)
    {
        for (uint32_t d = 0; d < 8; ++d)
        {
            const uint32_t id = s * 8 + d;
            const uint16_t label = first->FlowLabelOf(s, d, id);
            EXPECT_EQ(label, static_cast<uint16_t>(FabricEcmpHash(s, d, id, 0x6d)));
            EXPECT_EQ(label, again->FlowLabelOf(s, d, id)); // one run repeats
            differ2 += run2->FlowLabelOf(s, d, id) != label;
            differ7 += seed7->FlowLabelOf(s, d, id) != run2->FlowLabelOf(s, d, id);
        }
    }
    // another run draws other labels (16 bits: a few of 64 may coincide)
    EXPECT_GE(differ2, 60U);
    EXPECT_GE(differ7, 60U);
}

namespace
{
/// A sink that counts its notes.
class CountingSink : public MessageSink
{
  public:
    void MessageDelivered(uint64_t /* cookie */) override
    {
    }

    void NoteReceived(uint64_t cookie) override
    {
        notes += cookie;
    }

    uint64_t notes{0};
};
} // namespace

/// Makes CountingSinks for a reserved range, and counts how often it is asked.
struct SinkFactory
{
    MessageSink* Make(uint64_t serial)
    {
        ++asked;
        const MessageSink::ReservedSerial reserved(serial);
        made.push_back(std::make_unique<CountingSink>());
        return made.back().get();
    }

    std::vector<std::unique_ptr<CountingSink>> made;
    uint64_t asked{0};
};

TEST(TransportContract, ReservedSinkSerialsAreMadeOnFirstContactAndSkippedByOthers)
{
    // what a distributed ProgramRunner relies on: the k-th reserved serial is
    // the same whenever its sink is made, and a note for it makes it
    SinkFactory factory;
    uint64_t& asked = factory.asked;
    const uint64_t first =
        MessageSink::ReserveSerials(3, MakeCallback(&SinkFactory::Make, &factory));
    CountingSink after;
    EXPECT_EQ(after.GetSinkSerial(), first + 3) << "a sink made later skips the reserved range";
    EXPECT_EQ(MessageSink::FindSink(first + 3), &after);
    MessageSink* second = MessageSink::FindSink(first + 1);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->GetSinkSerial(), first + 1);
    EXPECT_EQ(MessageSink::FindSink(first + 1), second) << "made once";
    EXPECT_EQ(asked, 1u);
    EXPECT_EQ(MessageSink::FindSink(first + 4), nullptr) << "beyond the range: nobody";
    // a note through the transport base reaches a sink made by its serial
    Ptr<LossyTransport> transport = CreateObject<LossyTransport>(4, 2);
    transport->SendNote(0, 1, *second, 7, MicroSeconds(5));
    Simulator::Run();
    EXPECT_EQ(static_cast<CountingSink*>(second)->notes, 7u);
    MessageSink::ReleaseSerials(first);
    EXPECT_EQ(MessageSink::FindSink(first + 2), nullptr) << "released: made no more";
    EXPECT_EQ(asked, 1u);
    Simulator::Destroy();
}
