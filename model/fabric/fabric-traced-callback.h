/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_TRACED_CALLBACK_H
#define GPU_FABRIC_FABRIC_TRACED_CALLBACK_H

#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * A TracedCallback that keeps one bit of its owner's mask set while a sink
 * is connected, so that a hot path tests one byte of its owner instead of
 * each trace's list (a cache line apart, in a run that keeps thousands of
 * ports cold). Connecting and disconnecting work as for a TracedCallback:
 * the trace source accessors call the methods of the member's own type.
 */
template <typename... Ts>
class FabricTracedCallback : public TracedCallback<Ts...>
{
  public:
    FabricTracedCallback() = default;
    // a copy would point into its original's owner
    FabricTracedCallback(const FabricTracedCallback&) = delete;
    FabricTracedCallback& operator=(const FabricTracedCallback&) = delete;

    /**
     * Mirror the connection state in \p mask.
     * \param mask the owner's byte
     * \param bit the bit of this trace
     */
    void BindMask(uint8_t* mask, uint8_t bit)
    {
        m_mask = mask;
        m_bit = bit;
        Update();
    }

    /// \copydoc TracedCallback::ConnectWithoutContext
    void ConnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::ConnectWithoutContext(callback);
        Update();
    }

    /// \copydoc TracedCallback::Connect
    void Connect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Connect(callback, path);
        Update();
    }

    /// \copydoc TracedCallback::DisconnectWithoutContext
    void DisconnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::DisconnectWithoutContext(callback);
        Update();
    }

    /// \copydoc TracedCallback::Disconnect
    void Disconnect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Disconnect(callback, path);
        Update();
    }

  private:
    void Update()
    {
        if (m_mask != nullptr)
        {
            *m_mask = this->IsEmpty() ? (*m_mask & ~m_bit) : (*m_mask | m_bit);
        }
    }

    uint8_t* m_mask{nullptr}; //!< the owner's mask
    uint8_t m_bit{0};         //!< this trace's bit in it
};

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_TRACED_CALLBACK_H
