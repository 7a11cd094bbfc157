-- Wireshark / tshark dissector for gpu-fabric's FabricHeader (EtherType 0x88B5).
--
--   wireshark -X lua_script:doc/gpu-fabric.lua capture.pcap
--   tshark -X lua_script:doc/gpu-fabric.lua -r capture.pcap -Y 'gpufabric.last == 1'
--
-- Or copy it into Wireshark's personal plugins folder. Layout (see
-- model/fabric/fabric-header.h): an Ethernet II header whose MAC addresses
-- carry the ranks (02:00:<rank, 4 bytes big-endian>), EtherType 0x88B5, then
-- message id (4), sequence (4), flow label (2), flags (1), hop (1); the
-- payload is not carried (ns-3's zero-filled virtual bytes).
--
-- SPDX-License-Identifier: GPL-2.0-only

local proto = Proto("gpufabric", "gpu-fabric FabricHeader")

local flag_names = { [1] = "CE", [2] = "LAST", [4] = "SRC_ROUTE" }

local f = {
  src_rank = ProtoField.uint32("gpufabric.src_rank", "Source rank", base.DEC),
  dst_rank = ProtoField.uint32("gpufabric.dst_rank", "Destination rank", base.DEC),
  msg = ProtoField.uint32("gpufabric.msg", "Message id", base.DEC),
  seq = ProtoField.uint32("gpufabric.seq", "Packet sequence in the message", base.DEC),
  flow = ProtoField.uint16("gpufabric.flow", "Flow label (ECMP entropy, or source route id)",
                           base.DEC),
  flags = ProtoField.uint8("gpufabric.flags", "Flags", base.HEX),
  ce = ProtoField.bool("gpufabric.ce", "ECN congestion experienced", 8, nil, 0x01),
  last = ProtoField.bool("gpufabric.last", "Last packet of the message", 8, nil, 0x02),
  source_route = ProtoField.bool("gpufabric.source_route", "Source-routed", 8, nil, 0x04),
  hop = ProtoField.uint8("gpufabric.hop", "Hops taken (source-routed packets)", base.DEC),
  payload = ProtoField.uint32("gpufabric.payload", "Payload bytes (not carried)", base.DEC),
}
proto.fields = { f.src_rank, f.dst_rank, f.msg, f.seq, f.flow, f.flags, f.ce, f.last,
                 f.source_route, f.hop, f.payload }

local eth_src = Field.new("eth.src")
local eth_dst = Field.new("eth.dst")

-- the rank in the last 4 bytes of a 02:00:xx:xx:xx:xx address
local function rank_of(field)
  local mac = field()
  if mac == nil then
    return nil
  end
  return mac.range:range(2, 4):uint()
end

function proto.dissector(buf, pinfo, tree)
  if buf:len() < 12 then
    return 0
  end
  local flags = buf(10, 1):uint()
  local src, dst = rank_of(eth_src), rank_of(eth_dst)
  local t = tree:add(proto, buf(0, 12))
  if src ~= nil then
    t:add(f.src_rank, src):set_generated()
    t:add(f.dst_rank, dst):set_generated()
  end
  t:add(f.msg, buf(0, 4))
  t:add(f.seq, buf(4, 4))
  t:add(f.flow, buf(8, 2))
  local ft = t:add(f.flags, buf(10, 1))
  ft:add(f.ce, buf(10, 1))
  ft:add(f.last, buf(10, 1))
  ft:add(f.source_route, buf(10, 1))
  t:add(f.hop, buf(11, 1))
  t:add(f.payload, buf:reported_len() - 12):set_generated()

  local names = {}
  for bit, name in pairs(flag_names) do
    if bit32.band(flags, bit) ~= 0 then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  pinfo.cols.protocol = "GPU-FABRIC"
  pinfo.cols.info = string.format("rank %s -> %s  msg %u seq %u  %u bytes%s",
    tostring(src), tostring(dst), buf(0, 4):uint(), buf(4, 4):uint(),
    buf:reported_len() - 12, #names > 0 and ("  [" .. table.concat(names, ",") .. "]") or "")
  return 12
end

DissectorTable.get("ethertype"):add(0x88B5, proto)
