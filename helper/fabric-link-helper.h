/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef GPU_FABRIC_FABRIC_LINK_HELPER_H
#define GPU_FABRIC_FABRIC_LINK_HELPER_H

#include "ns3/fabric-trace-helper.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/queue.h"

#include <string>

namespace ns3
{

/**
 * \ingroup gpu-fabric
 * \brief Joins two ns-3 nodes of any kind with a FabricNetDevice link, as
 * PointToPointHelper does with its own devices: the way to use the fabric's
 * link model (rate, delay, queue, traces, faults, bit errors) under an ns-3
 * Internet stack or any protocol that sends through NetDevice::Send.
 *
 * A device on a plain node gets a NetDeviceQueueInterface, as
 * PointToPointHelper's do, so ns-3's traffic control layer stops when the
 * device queue is full and its queue disc holds the backlog
 * (DisableFlowControl turns this off).
 *
 * Frames carry a 14-byte Ethernet II header (see FabricNetDevice), so
 * EnablePcap / EnablePcapAll write Ethernet captures that Wireshark decodes
 * down to IP and TCP; EnableAscii / EnableAsciiAll write ns-3's ASCII trace
 * (see FabricDeviceTraceHelper).
 */
class FabricLinkHelper : public FabricDeviceTraceHelper
{
  public:
    FabricLinkHelper();

    /// Set an attribute of every FabricNetDevice made (DataRate, Mtu, PfcXoff, ...).
    void SetDeviceAttribute(const std::string& name, const AttributeValue& value);
    /// Set an attribute of every FabricChannel made (Delay).
    void SetChannelAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Give every device a transmit queue of this type. Default, as
     * PointToPointHelper's: a DropTailQueue<Packet> of its default MaxSize
     * (100 packets) on a plain node; a FabricNode's port keeps the queue its
     * node gives it (a switch's PortBuffer).
     * \param type the queue's TypeId name, e.g. "ns3::DropTailQueue"
     *        ("<Packet>" is appended when missing)
     * \param args attribute name and value pairs, e.g. "MaxSize",
     *        QueueSizeValue(QueueSize("100p"))
     */
    template <typename... Ts>
    void SetQueue(std::string type, Ts&&... args);

    /**
     * As PointToPointHelper::DisableFlowControl: devices on plain nodes get no
     * NetDeviceQueueInterface, so ns-3's traffic control layer gets no
     * backpressure (Ipv4AddressHelper then installs no queue disc and every
     * packet queues, and drops, in the device's Queue<Packet>). This is ns-3's
     * flow control between traffic control and the device; PFC between fabric
     * ports is the devices' PfcEnabled attribute and is not affected.
     */
    void DisableFlowControl();

    /**
     * Join two nodes with one link. A FabricNode (a FabricSwitch, say) gets
     * the device as its next port (FabricNode::AddPort), which it
     * configures as its own (a switch sets its queue to PortBuffer and its
     * PFC and ECN attributes over the helper's device attributes; the
     * helper's SetQueue still wins); other nodes get it as a device
     * (Node::AddDevice) with a NetDeviceQueueInterface (unless
     * DisableFlowControl).
     * \param a one end \param b the other end
     * \return the two devices, a's first
     */
    NetDeviceContainer Install(Ptr<Node> a, Ptr<Node> b) const;

    /**
     * \param nodes exactly two nodes; another count aborts the program
     *        (NS_ABORT_MSG, in every build), as PointToPointHelper's assert
     *        does, with a message naming the count
     * \return the two devices, in the container's order
     */
    NetDeviceContainer Install(const NodeContainer& nodes) const;

    /**
     * Join two nodes known by name (ns3::Names), as PointToPointHelper does.
     * \param aName one end's name \param bName the other end's name
     * \return the two devices, a's first
     */
    NetDeviceContainer Install(const std::string& aName, const std::string& bName) const;
    /// \copydoc Install(const std::string&, const std::string&) const
    NetDeviceContainer Install(const std::string& aName, Ptr<Node> b) const;
    /// \copydoc Install(const std::string&, const std::string&) const
    NetDeviceContainer Install(Ptr<Node> a, const std::string& bName) const;

  private:
    ObjectFactory m_deviceFactory;
    ObjectFactory m_channelFactory;
    ObjectFactory m_queueFactory; //!< unset: the device's default queue
    bool m_queueInterface{true};  //!< aggregate a NetDeviceQueueInterface on plain nodes
};

template <typename... Ts>
void
FabricLinkHelper::SetQueue(std::string type, Ts&&... args)
{
    QueueBase::AppendItemTypeIfNotPresent(type, "Packet");
    m_queueFactory.SetTypeId(type);
    m_queueFactory.Set(std::forward<Ts>(args)...);
}

} // namespace ns3

#endif // GPU_FABRIC_FABRIC_LINK_HELPER_H
