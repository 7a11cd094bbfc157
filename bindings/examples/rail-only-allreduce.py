#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Ring allreduce on rail-only vs a rail-optimized fat-tree, from Python.

The allreduces of `collective-bench --topology=<each> --collective=allreduce`,
written with the gpu_fabric module: build each topology, count its equipment
and cost, run one allreduce per size at packet level, each on a fresh fabric in a
fresh simulation (as collective-bench runs its sizes), and print nccl-tests'
figures beside the network's cost.

    PYTHONPATH=build/python python3 bindings/examples/rail-only-allreduce.py
"""
import argparse
import json
import sys

import gpu_fabric as gf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=32)
    parser.add_argument("--preset", default="dgx-h100", choices=gf.HbDomainPreset.Names())
    parser.add_argument("--radix", type=int, default=64)
    parser.add_argument("--sizes", default="1048576,16777216", help="bytes, comma-separated")
    parser.add_argument("--json", help="write the rows as JSON to this path")
    args = parser.parse_args()

    params = gf.ClusterParams()
    params.gpus = args.gpus
    params.platform = gf.HbDomainPreset.Get(args.preset)
    params.radix = args.radix
    sizes = [int(s) for s in args.sizes.split(",")]
    prices = gf.FabricCostModel()
    rows = []
    print(f"{'topology':<15} {'switches':>8} {'cost($)':>12} {'size(B)':>10} "
          f"{'time(us)':>10} {'busbw(GB/s)':>12}")
    for name, build in (("rail-only", gf.BuildRailOnly),
                        ("rail-optimized", gf.BuildRailOptimized)):
        topology = build(params)  # raises gf.ConfigError on bad parameters
        counts = gf.CountEquipment(topology, args.radix)
        for size in sizes:
            fabric = gf.FabricHelper().Install(topology)
            run = gf.CollectiveHelper(fabric).Install(
                gf.CollectiveHelper.AllRanks(args.gpus), "allreduce", "ring", size)
            gf.Simulator.Run()
            result = run.GetResult()
            fabric.Dispose()
            gf.Simulator.Destroy()
            if not result.complete:
                sys.exit(f"allreduce of {size} bytes did not complete on {name}")
            rows.append({"topology": name, "switches": counts.switches,
                         "cost_usd": prices.Cost(counts), "bytes": size,
                         "time_s": result.timeS, "busbw_gbps": result.busbwGBps})
            print(f"{name:<15} {counts.switches:>8} {prices.Cost(counts):>12.0f} {size:>10} "
                  f"{result.timeS * 1e6:>10.2f} {result.busbwGBps:>12.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
