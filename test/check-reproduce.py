#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ctest reproduce.all-quick: runs `reproduce all --quick` and checks that every
target wrote its files and every published value has its row, within the
tolerance the target states; the rows whose value is ours to compute exactly
(counts, closed forms) must be equal.  Usage: check-reproduce.py REPRODUCE OUTDIR"""

import json
import os
import shutil
import subprocess
import sys

# rows each target must produce: one per published value
EXPECTED_ROWS = {
    "table2": 28, "trimmed-clos": 4, "cost": 6, "fig3a": 2, "fig3b": 2, "fig4": 0, "fig5": 2, "fig7": 4, "fig8": 0, "gpt1t-hfu": 1, "moe": 4,
    "failure": 3, "equal-time": 2, "dc-biring": 2, "dc-k44": 2, "dc-llk44": 2,
    "dc-expansion": 8, "dc-testbed": 4, "dc-1000": 2, "dc-bfb-scale": 6, "dc-pareto": 3,
}
# targets whose every row is exact (counts and closed forms)
EXACT_TARGETS = {"table2", "dc-biring", "dc-k44", "dc-llk44", "dc-pareto"}

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def main():
    reproduce, out = sys.argv[1], sys.argv[2]
    listed = subprocess.run([reproduce, "--list"], stdout=subprocess.PIPE, text=True, check=True)
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    expect(sorted(names) == sorted(EXPECTED_ROWS), "targets listed: %s" % names)
    # bad arguments exit 2 naming the value and what is allowed
    bad = subprocess.run([reproduce, "fig99"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    expect(bad.returncode == 2 and "fig99" in bad.stderr and "allowed" in bad.stderr,
           "unknown target: %d %s" % (bad.returncode, bad.stderr))

    run = subprocess.run([reproduce, "all", "--quick", "--out=" + out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    expect(run.returncode == 0, "reproduce all --quick exited %d" % run.returncode)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    expect(summary["quick"] is True, "summary not marked quick")
    md = open(os.path.join(out, "summary.md")).read()
    rows = summary["rows"]
    for name, n in EXPECTED_ROWS.items():
        mine = [r for r in rows if r["target"] == name]
        expect(len(mine) == n, "%s: %d rows, expected %d" % (name, len(mine), n))
        for ext in ("json", "csv"):
            expect(os.path.isfile(os.path.join(out, "%s.%s" % (name, ext))),
                   "%s.%s missing" % (name, ext))
        with open(os.path.join(out, name + ".json")) as f:
            expect(json.load(f)["rows"] == mine, "%s.json rows differ from summary" % name)
        if name in EXACT_TARGETS:
            for r in mine:
                expect(r["check"] == "exact" and r["ours"] == r["paper"] and r["deviation"] == 0,
                       "%s: %s not exact: %s vs %s" % (name, r["quantity"], r["ours"],
                                                       r["paper"]))
    # fig4 (data only): the whole cluster's heatmap, its blocks adding up to
    # the cluster's bytes, and the 128-GPU one
    with open(os.path.join(out, "fig4.json")) as f:
        fig4 = json.load(f)["data"].get("traffic-sparsity", {})
    heat = fig4.get("cluster", {}).get("heatmap", {})
    expect(fig4.get("cluster", {}).get("gpus") == 32768, "fig4: not at 32768 GPUs")
    expect(heat.get("cells_per_side", 0) * heat.get("block_gpus", 0) == 32768,
           "fig4: heatmap blocks %s" % heat)
    expect(heat.get("cells_with_traffic", 0) > 0 and
           abs(heat.get("gb_per_iteration", 0) - fig4["cluster"]["total_bytes"] / 1e9) <=
           1e-6 * fig4["cluster"]["total_bytes"] / 1e9, "fig4: heatmap bytes %s" % heat)
    if shutil.which("gnuplot"):
        for png in ("fig4.png", "fig4-128gpus.png"):
            expect(os.path.isfile(os.path.join(out, png)), png + " missing")
    for r in rows:
        what = "%s: %s (paper %s, ours %s)" % (r["target"], r["quantity"], r["paper"], r["ours"])
        expect(r["ours"] is not None, "no value: " + what)
        expect(r["ok"] is True, "out of tolerance: " + what)
        expect(r["where"] and r["command"], "no source or command: " + what)
        if r["check"] == "rel":
            expect(r["deviation"] <= r["tolerance"], "deviation above tolerance: " + what)
        if r["check"] == "exact":
            expect(r["ours"] == r["paper"], "not equal: " + what)
        expect(r["quantity"] in md, "not in summary.md: " + what)
    if failures:
        for f in failures:
            print("FAIL: " + f, file=sys.stderr)
        return 1
    print("reproduce: %d rows over %d targets, all present and within tolerance" %
          (len(rows), len(EXPECTED_ROWS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
