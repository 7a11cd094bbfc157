#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes small Chakra execution traces for test-chakra-trace, independently
of the module's C++ writer: Debian's python3-protobuf with the classes protoc
generates from model/workload/chakra-et.proto (PYTHONPATH), and its own
length-delimited framing, as Chakra's tools write files.

usage: chakra-writer.py JOB PREFIX [RANKS COMPUTE_US BYTES]
JOB: dp | tp | unknown-type | dangling-dep | cycle | missing-rank |
     size-mismatch | unmatched-send | sendrecv
"""
import sys

import chakra_et_pb2 as et


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def write(path, nodes):
    with open(path, "wb") as f:
        meta = et.GlobalMetadata(version="0.0.4").SerializeToString()
        f.write(varint(len(meta)) + meta)
        for n in nodes:
            data = n.SerializeToString()
            f.write(varint(len(data)) + data)


def comp(node_id, micros, deps=(), ctrl=()):
    return et.Node(id=node_id, name=f"gemm {node_id}", type=et.COMP_NODE,
                   duration_micros=micros, data_deps=list(deps), ctrl_deps=list(ctrl))


def coll(node_id, comm_type, size, pg, deps=(), ctrl=()):
    n = et.Node(id=node_id, name=f"nccl {node_id}", type=et.COMM_COLL_NODE,
                data_deps=list(deps), ctrl_deps=list(ctrl))
    # Chakra's converters write these as int64 attributes; one here is
    # uint64 so that both kinds are read
    n.attr.add(name="comm_type", int64_val=comm_type)
    n.attr.add(name="comm_size", uint64_val=size)
    n.attr.add(name="pg_name", string_val=pg)
    n.attr.add(name="is_cpu_op", bool_val=False)
    return n


def p2p(node_id, send, peer, size, tag, deps=()):
    n = et.Node(id=node_id, name=f"p2p {node_id}",
                type=et.COMM_SEND_NODE if send else et.COMM_RECV_NODE, data_deps=list(deps))
    n.attr.add(name="comm_dst" if send else "comm_src", int64_val=peer)
    n.attr.add(name="comm_size", int64_val=size)
    n.attr.add(name="comm_tag", int64_val=tag)
    return n


def main():
    job, prefix = sys.argv[1], sys.argv[2]
    ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    us = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    size = int(sys.argv[5]) if len(sys.argv) > 5 else 1 << 20
    domain = 8
    for r in range(ranks):
        if job == "dp":
            # data parallel across the domains: compute, then the gradient
            # all-reduce of this GPU's rail (ids not in execution order)
            nodes = [coll(7, et.ALL_REDUCE, size, f"dp-rail-{r % domain}", deps=[3]),
                     comp(3, us)]
        elif job == "tp":
            # tensor parallel inside each domain: two layers of compute and
            # all-reduce, the second compute after the first all-reduce by a
            # control dependency
            pg = f"tp-{r // domain}"
            nodes = [comp(1, us), coll(2, et.ALL_REDUCE, size, pg, deps=[1]),
                     comp(3, us, ctrl=[2]), coll(4, et.ALL_REDUCE, size, pg, deps=[3])]
        elif job == "sendrecv":
            # a pipeline: rank r receives from r-1, computes, sends to r+1
            nodes = [comp(1, us)]
            if r > 0:
                nodes.append(p2p(2, False, r - 1, size, 5))
            if r + 1 < ranks:
                nodes.append(p2p(3, True, r + 1, size, 5, deps=[1] + ([2] if r > 0 else [])))
        elif job == "unknown-type":
            nodes = [comp(1, us), et.Node(id=2, name="odd", type=42, data_deps=[1])]
        elif job == "dangling-dep":
            nodes = [comp(1, us), comp(2, us, deps=[99])]
        elif job == "cycle":
            nodes = [comp(1, us, deps=[3]), comp(2, us, deps=[1]), comp(3, us, ctrl=[2])]
        elif job == "missing-rank":
            if r == 2:
                continue
            nodes = [comp(1, us)]
        elif job == "size-mismatch":
            nodes = [coll(1, et.ALL_REDUCE, size + (4 if r == 1 else 0), "world")]
        elif job == "unmatched-send":
            nodes = [p2p(1, True, (r + 1) % ranks, size, 0)] if r == 0 else [comp(1, us)]
        else:
            sys.exit(f"chakra-writer: unknown job {job}")
        write(f"{prefix}.{r}.et", nodes)


if __name__ == "__main__":
    main()
