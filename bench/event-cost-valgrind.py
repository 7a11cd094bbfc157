#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The event cost ratio of bench/fabric-throughput, counted instead of timed.

fabric-throughput times a fabric event against a bare ns-3 scheduler event in
one process; on a shared machine the wall times move by 30 % from run to run.
This script runs each loop alone (--loop=fabric, then --loop=bare with the
fabric run's mean pending events) under valgrind's callgrind, collecting only
inside Simulator::Run, and prints per event of each loop: instructions, data
reads and writes, and the misses of a simulated first-level data cache and of a
second level (by default 48 KiB 12-way and 1 MiB 8-way, the caches of the
machine the documented figures were counted for, so that counts stay
comparable; --d1=machine --l2=machine read the caches of the machine it runs
on). Both loops run on ns-3's default scheduler, the map (the issue's
yardstick); --scheduler runs the fabric loop on another (the programs' own
default is the module's FabricLookaheadScheduler, whose prefetches a
simulated cache does not model). Counts are the same on every run of the
same build and command line.
Needs valgrind (Debian package valgrind, installed by scripts/install-deps.sh).
A 1,024-host run takes some 4 minutes, --hosts=256 under one.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EVENTS = ["Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw"]


def fail(message):
    print(f"event-cost-valgrind: {message}", file=sys.stderr)
    sys.exit(2)


def power_of_two(n):
    return n > 0 and n & (n - 1) == 0


def cache_spec(text, flag):
    # valgrind's own rules: a line of 16 bytes or more, a power of two, and a
    # power-of-two number of sets (size / (ways x line))
    parts = text.split(",")
    ok = len(parts) == 3 and all(p.isdigit() and int(p) > 0 for p in parts)
    if ok:
        size, ways, line = (int(p) for p in parts)
        ok = (line >= 16 and power_of_two(line) and size % (ways * line) == 0
              and power_of_two(size // (ways * line)))
    if not ok:
        example = "49152,12,64" if flag.startswith("--d1") else "1048576,8,64"
        fail(f"invalid {flag}: got '{text}', allowed: 'machine', or size,ways,line in bytes with "
             "the line a power of two of 16 or more and size / (ways x line) a power of two, e.g. "
             f"{example}")
    return text


def parse_size(text):
    """Bytes of a sysfs cache size such as '48K', '2048K' or '2M'."""
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip())
    if m is None:
        return None
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def machine_cache(cache_dir, level, kinds, flag):
    """size,ways,line of the cache at this level whose type is one of kinds, as
    Linux describes it under cache_dir (index0, index1, ...)."""
    try:
        entries = sorted(e for e in os.listdir(cache_dir) if e.startswith("index"))
    except OSError as e:
        fail(f"invalid {flag}: got 'machine', but --cpu-cache-dir {cache_dir} cannot be read "
             f"({e.strerror}); allowed: size,ways,line in bytes")
    for entry in entries:
        def read(name):
            try:
                with open(os.path.join(cache_dir, entry, name)) as f:
                    return f.read().strip()
            except OSError:
                return ""
        if read("level") != str(level) or read("type") not in kinds:
            continue
        size, ways, line = parse_size(read("size")), read("ways_of_associativity"), read(
            "coherency_line_size")
        if not (size and ways.isdigit() and line.isdigit()):
            fail(f"invalid {flag}: got 'machine', but {cache_dir}/{entry} has no readable size, "
                 f"ways_of_associativity and coherency_line_size (read '{read('size')}', '{ways}', "
                 f"'{line}'); allowed: size,ways,line in bytes")
        return cache_spec(f"{size},{ways},{line}", f"{flag} (machine: {cache_dir}/{entry})")
    fail(f"invalid {flag}: got 'machine', but {cache_dir} describes no level-{level} "
         f"{' or '.join(kinds).lower()} cache; allowed: size,ways,line in bytes, e.g. "
         "1048576,8,64")


def totals(out_file):
    """Event names and totals of a callgrind output file."""
    names, values = None, None
    with open(out_file) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("totals:") or line.startswith("summary:"):
                values = [int(v) for v in line.split()[1:]]
    if names is None or values is None:
        fail(f"no totals in {out_file}")
    got = dict(zip(names, values + [0] * (len(names) - len(values))))
    return {k: got.get(k, 0) for k in EVENTS}


def profile(binary, flags, args, workdir, name):
    out = os.path.join(workdir, name + ".callgrind")
    js = os.path.join(workdir, name + ".json")
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--D1={args.d1}",
           f"--LL={args.l2}", "--toggle-collect=ns3::Simulator::Run*",
           f"--callgrind-out-file={out}", binary] + flags + [f"--json={js}"]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr[-2000:])
        fail(f"{' '.join(cmd)} exited with {run.returncode}")
    with open(js) as f:
        return totals(out), json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "build", "bin"),
        help="folder of fabric-throughput (default: build/bin)")
    parser.add_argument("--hosts", type=int, default=1024, help="hosts of the fat-tree")
    parser.add_argument("--d1", default="49152,12,64",
                        help="first-level data cache: size,ways,line, or 'machine'")
    parser.add_argument("--l2", default="1048576,8,64",
                        help="second-level cache: size,ways,line, or 'machine'")
    parser.add_argument("--cpu-cache-dir", default="/sys/devices/system/cpu/cpu0/cache",
                        help="where 'machine' reads the caches (Linux sysfs)")
    parser.add_argument("--print-caches", action="store_true",
                        help="print the caches that would be simulated, and stop")
    parser.add_argument("--bare-events", type=int, default=0,
                        help="events of the bare loop (default: as fabric-throughput's own run, "
                             "the fabric's events and at least a million)")
    parser.add_argument("--scheduler", default="ns3::MapScheduler",
                        help="ns-3 scheduler of the fabric loop (the bare loop: always the map)")
    parser.add_argument("--json", help="write the figures as JSON to this path")
    args = parser.parse_args()
    if args.hosts < 2:
        fail(f"invalid --hosts: got '{args.hosts}', allowed: at least 2")
    if args.bare_events < 0:
        fail(f"invalid --bare-events: got '{args.bare_events}', allowed: a positive count "
             "(0: as fabric-throughput)")
    if args.d1 == "machine":
        args.d1 = machine_cache(args.cpu_cache_dir, 1, ("Data", "Unified"), "--d1")
    if args.l2 == "machine":
        args.l2 = machine_cache(args.cpu_cache_dir, 2, ("Unified", "Data"), "--l2")
    cache_spec(args.d1, "--d1")
    cache_spec(args.l2, "--l2")
    if args.print_caches:
        print(f"D1 {args.d1}, L2 {args.l2} (size,ways,line)")
        return
    if shutil.which("valgrind") is None:
        fail("valgrind not found: install it (apt-get install valgrind)")
    binary = os.path.join(args.bin_dir, "fabric-throughput")
    if not os.access(binary, os.X_OK):
        fail(f"invalid --bin-dir: got '{args.bin_dir}', allowed: a folder with fabric-throughput")

    with tempfile.TemporaryDirectory() as work:
        fab, fab_json = profile(binary, ["--loop=fabric", f"--hosts={args.hosts}",
                                         f"--SchedulerType={args.scheduler}"], args, work,
                                "fabric")
        events = fab_json["events"]
        # the bare loop fabric-throughput itself would run beside this one
        pending = fab_json["bare_pending"]
        bare_events = args.bare_events or fab_json["bare_events"]
        bare, bare_json = profile(binary, ["--loop=bare", f"--bare-pending={pending}",
                                           f"--bare-events={bare_events}",
                                           "--SchedulerType=ns3::MapScheduler"], args, work,
                                  "bare")
    executed = {"fabric": events, "bare": bare_events + pending}
    per = {
        "fabric": {k: v / executed["fabric"] for k, v in fab.items()},
        "bare": {k: v / executed["bare"] for k, v in bare.items()},
    }
    # a ratio to a count the bare loop hardly has (its misses: below one in ten
    # events) says nothing; the JSON keeps the counts
    ratio = {k: per["fabric"][k] / per["bare"][k] for k in EVENTS if per["bare"][k] >= 0.1}

    print(f"event-cost-valgrind: fabric-throughput --hosts={args.hosts}, {events} fabric events, "
          f"bare loop {executed['bare']} events with {pending} pending")
    print(f"  schedulers: fabric {fab_json['scheduler']}, bare {bare_json['scheduler']}")
    print(f"  caches: D1 {args.d1}, L2 {args.l2} (size,ways,line)")
    print(f"  {'per event':<30}{'fabric':>12}{'bare':>12}{'ratio':>10}")
    labels = {"Ir": "instructions", "Dr": "data reads", "Dw": "data writes",
              "D1mr": "D1 read misses", "D1mw": "D1 write misses",
              "DLmr": "L2 read misses", "DLmw": "L2 write misses"}
    for k in EVENTS:
        r = f"{ratio[k]:>10.2f}" if k in ratio else f"{'-':>10}"
        print(f"  {labels[k]:<30}{per['fabric'][k]:>12.1f}{per['bare'][k]:>12.1f}{r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"hosts": args.hosts, "fabric_events": events,
                       "bare_events": executed["bare"], "bare_pending": pending,
                       "scheduler": fab_json["scheduler"],
                       "bare_scheduler": bare_json["scheduler"],
                       "d1": args.d1, "l2": args.l2, "per_event": per, "ratio": ratio,
                       "totals": {"fabric": fab, "bare": bare}}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
