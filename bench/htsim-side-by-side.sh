#!/usr/bin/env bash
# Runs htsim's HPCC driver (datacenter/htsim_hpcc) and fabric-throughput on the
# same permutation workload, alternating, and prints wall time, peak RSS,
# simulated completion and packets of each, and the wall-time ratio.
#
#   bench/htsim-side-by-side.sh HTSIM_DIR [--hosts=N] [--radix=K] [--flow-bytes=B]
#       [--runs=R] [--seed=S] [--cc=NAME] [--fabric=PATH] [--work=DIR]
#
# HTSIM_DIR is an existing checkout of https://github.com/Broadcom/csg-htsim
# (nothing is downloaded); its sim/libhtsim.a and sim/datacenter/htsim_hpcc are
# built with its own Makefiles if missing. --hosts must be k^3/4 for --radix k
# (htsim sizes its three-tier fat-tree from the host count alone). On a shared
# machine wrap the whole script in `flock /tmp/gpu-fabric-build.lock`.
set -euo pipefail

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
bad() {
    echo "htsim-side-by-side: $1" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
htsim=$1
shift
hosts=1024 radix=16 flow_bytes=2000000 runs=2 seed=1 cc=hpcc
here=$(cd "$(dirname "$0")/.." && pwd)
fabric=$here/build/bin/fabric-throughput
work=
for arg in "$@"; do
    case $arg in
    --hosts=*) hosts=${arg#*=} ;;
    --radix=*) radix=${arg#*=} ;;
    --flow-bytes=*) flow_bytes=${arg#*=} ;;
    --runs=*) runs=${arg#*=} ;;
    --seed=*) seed=${arg#*=} ;;
    --cc=*) cc=${arg#*=} ;;
    --fabric=*) fabric=${arg#*=} ;;
    --work=*) work=${arg#*=} ;;
    *) bad "unknown argument '$arg' (allowed: --hosts --radix --flow-bytes --runs --seed --cc --fabric --work)" ;;
    esac
done
for v in hosts radix flow_bytes runs seed; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || bad "--${v//_/-}=${!v}: must be a positive integer"
done
((radix % 2 == 0)) || bad "--radix=$radix: must be even"
((hosts == radix * radix * radix / 4)) ||
    bad "--hosts=$hosts: htsim's fat-tree of radix $radix has $((radix * radix * radix / 4)) hosts; give --hosts=k^3/4"
[[ -d $htsim/sim/datacenter ]] || bad "HTSIM_DIR '$htsim': no sim/datacenter in it (expected a csg-htsim checkout)"
[[ -x $fabric ]] || bad "--fabric=$fabric: not an executable (build gpu-fabric first)"
[[ -x /usr/bin/time ]] || bad "/usr/bin/time is missing (Debian package 'time')"

driver=$htsim/sim/datacenter/htsim_hpcc
if [[ ! -x $driver ]]; then
    echo "building $driver" >&2
    make -C "$htsim/sim" -j2 libhtsim.a >/dev/null
    make -C "$htsim/sim/datacenter" -j2 htsim_hpcc >/dev/null
fi

work=${work:-$(mktemp -d /tmp/htsim-side-by-side.XXXXXX)}
mkdir -p "$work"
tm=$work/perm_${hosts}n_${flow_bytes}b_seed${seed}.cm
# A derangement (every host sends one flow and receives one), all flows
# starting at 0, in htsim's connection-matrix format. Not the same draw as
# fabric-throughput's (ns-3's RNG), the same kind and size.
awk -v n="$hosts" -v b="$flow_bytes" -v s="$seed" 'BEGIN {
    srand(s)
    for (i = 0; i < n; i++) d[i] = i
    for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = d[i]; d[i] = d[j]; d[j] = t }
    for (i = 0; i < n; i++) if (d[i] == i) { j = (i + 1) % n; t = d[i]; d[i] = d[j]; d[j] = t }
    print "Nodes " n; print "Connections " n
    for (i = 0; i < n; i++) print i "->" d[i] " id " i + 1 " start 0 size " b
}' >"$tm"

# htsim: 100 Gb/s (its HOST_NIC), 1 us per hop, 4096-byte packets, per-flow
# ECMP in the switches, lossless (PFC) input queues with the XOFF/XON of
# fabric-throughput's switches (32 and 24 packets of 4 KiB = 128 and 96 KiB),
# output queues large enough not to overflow under them (1000 packets; htsim
# only warns on overflow, it never drops in lossless mode).
htsim_args=(-nodes "$hosts" -tm "$tm" -strat ecmp_host -paths 1 -mtu 4096
    -linkspeed 100000 -hop_latency 1 -q 1000 -pfc_thresholds 24 32 -end 100000 -seed "$seed")
fabric_args=(--hosts="$hosts" --radix="$radix" --flow-bytes="$flow_bytes" --seed="$seed"
    --cc="$cc" --loop=fabric)

timed() { # log-prefix command...
    local out=$1
    shift
    /usr/bin/time -v -o "$out.time" "$@" >"$out.out" 2>"$out.err"
}
wall_of() { # elapsed "h:mm:ss" or "m:ss.cc" -> seconds
    awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$1"
}
rss_of() { awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$1"; }

printf '%-8s %-4s %9s %9s %12s %12s %s\n' sim run "wall s" "RSS MiB" "sim. ms" "data pkts" note
for ((r = 1; r <= runs; r++)); do
    h=$work/htsim.$r
    timed "$h" "$driver" "${htsim_args[@]}"
    hw=$(wall_of "$h.time")
    hfin=$(awk '/^Flow .* finished at/ { n++; if ($5 > m) m = $5 } END { printf "%.3f %d", m / 1000, n }' "$h.out")
    # htsim's HPCC source prints a line per ACK it receives (one ACK per data
    # packet); its New/Rtx counters stay 0 for HPCC.
    hpk=$(grep -c '^CWND' "$h.out" || true)
    [[ $hpk == 0 ]] && hpk=?
    printf '%-8s %-4s %9.2f %9s %12s %12s %s\n' htsim "$r" "$hw" "$(rss_of "$h.time")" \
        "${hfin% *}" "${hpk:-?}" "${hfin#* }/$hosts flows finished"

    f=$work/fabric.$r
    timed "$f" "$fabric" "${fabric_args[@]}"
    fw=$(wall_of "$f.time")
    fsim=$(awk '/simulated time/ { printf "%.3f", $3 * 1000 }' "$f.out")
    fpk=$(awk '/packets delivered/ { print $3 }' "$f.out")
    frun=$(awk '/wall time \(Simulator::Run\)/ { print $4 }' "$f.out")
    printf '%-8s %-4s %9.2f %9s %12s %12s %s\n' fabric "$r" "$fw" "$(rss_of "$f.time")" \
        "$fsim" "$fpk" "Run() ${frun} s, --cc=$cc"
    awk -v a="$fw" -v b="$hw" 'BEGIN { if (b > 0) printf "ratio    %-4s %9.2f  (fabric wall / htsim wall)\n", "'"$r"'", a / b }'
done
echo "outputs in $work" >&2
