#!/usr/bin/env bash
# Measures what N ranks of mpi-scale gain over ns-3's sequential engine on
# this machine: rounds of the sequential run pinned to each core in turn, N
# sequential runs side by side (one per core: what the cores give N
# independent processes), and mpirun -np N, interleaved so that each round
# meets the same load. Prints every round and the medians.
#
#   bench/mpi-speedup.sh [--rounds=R] [--np=N] [--mpi-scale=PATH] [-- FLAGS...]
#
# FLAGS go to every mpi-scale run (default: --flow-bytes=4194304, the
# 1,024-host permutation). Times are mpi-scale's "wall time (Simulator::Run,
# slowest rank)". Needs the MPI build (scripts/build.sh --mpi). On a shared
# machine wrap it in `flock /tmp/gpu-fabric-build.lock`.
set -euo pipefail

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
bad() {
    echo "mpi-speedup: $1" >&2
    exit 2
}

rounds=10 np=2
here=$(cd "$(dirname "$0")/.." && pwd)
scale=$here/build-mpi/bin/mpi-scale
flags=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds=*) rounds=${1#*=} ;;
    --np=*) np=${1#*=} ;;
    --mpi-scale=*) scale=${1#*=} ;;
    --help | -h) usage ;;
    --)
        shift
        flags=("$@")
        break
        ;;
    *) bad "unknown argument '$1' (allowed: --rounds=R --np=N --mpi-scale=PATH, then -- and mpi-scale's flags)" ;;
    esac
    shift
done
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 && $rounds -le 1000 ]] ||
    bad "--rounds=$rounds: must be a whole number from 1 to 1000"
[[ $np =~ ^[0-9]+$ && $np -ge 2 && $np -le 64 ]] ||
    bad "--np=$np: must be a whole number from 2 to 64"
[[ -x $scale ]] || bad "--mpi-scale=$scale: not an executable (build it with scripts/build.sh --mpi)"
command -v mpirun >/dev/null || bad "mpirun is missing (scripts/install-deps.sh --mpi installs Open MPI)"
[[ ${#flags[@]} -gt 0 ]] || flags=(--flow-bytes=4194304)

cores=$(nproc)
mpi=(mpirun -np "$np")
[[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)
((np > cores)) && mpi+=(--oversubscribe)
pin() { # core command...: on that core where taskset exists and the core does
    local core=$1
    shift
    if command -v taskset >/dev/null && ((core < cores)); then
        taskset -c "$core" "$@"
    else
        "$@"
    fi
}
wall() { # mpi-scale's output on stdin -> its Simulator::Run wall time
    awk '/wall time \(Simulator::Run/ { print $(NF - 1); found = 1 } END { exit !found }'
}
run_seq() { # core
    pin "$1" "$scale" --sequential "${flags[@]}" 2>&1 | wall ||
        bad "mpi-scale --sequential ${flags[*]} printed no wall time"
}

work=$(mktemp -d /tmp/mpi-speedup.XXXXXX)
trap 'rm -rf "$work"' EXIT
# the flags are checked once, by the sequential engine, before any timing
if ! "$scale" --sequential "${flags[@]}" >"$work/check" 2>&1; then
    cat "$work/check" >&2
    bad "mpi-scale --sequential ${flags[*]} failed (its message is above)"
fi

echo "mpi-speedup: $rounds round(s) of mpi-scale ${flags[*]} on $cores core(s): sequential on each core, $np side by side, mpirun -np $np"
printf '%-6s' round
for ((c = 0; c < np; ++c)); do printf ' %9s' "seq@$c s"; done
printf ' %13s %11s %9s\n' "side by side" "np=$np s" speed-up
for ((r = 1; r <= rounds; ++r)); do
    alone=()
    for ((c = 0; c < np; ++c)); do
        alone+=("$(run_seq "$c")")
    done
    for ((c = 0; c < np; ++c)); do
        (pin "$c" "$scale" --sequential "${flags[@]}" >"$work/side.$c" 2>&1) &
    done
    wait
    side=()
    for ((c = 0; c < np; ++c)); do
        side+=("$(wall <"$work/side.$c")") || bad "a side-by-side run printed no wall time"
    done
    dist=$("${mpi[@]}" "$scale" "${flags[@]}" 2>&1 | wall) ||
        bad "mpirun -np $np mpi-scale ${flags[*]} printed no wall time"
    printf '%s\n' "${alone[@]}" >>"$work/alone"
    printf '%s\n' "${side[@]}" >>"$work/side"
    echo "$dist" >>"$work/dist"
    for ((c = 0; c < np; ++c)); do echo "${alone[$c]}" >>"$work/core.$c"; done
    mean=$(printf '%s\n' "${alone[@]}" | awk '{ s += $1 } END { print s / NR }')
    sidemean=$(printf '%s\n' "${side[@]}" | awk '{ s += $1 } END { print s / NR }')
    printf '%-6s' "$r"
    for ((c = 0; c < np; ++c)); do printf ' %9.3f' "${alone[$c]}"; done
    printf ' %13.3f %11.3f %8.2fx\n' "$sidemean" "$dist" "$(awk -v a="$mean" -v b="$dist" 'BEGIN { print a / b }')"
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_alone=$(median "$work/alone")
m_side=$(median "$work/side")
m_dist=$(median "$work/dist")
echo "medians over $rounds round(s):"
row() { printf '  %-36s %8.3f s%s\n' "$1" "$2" "${3:-}"; }
for ((c = 0; c < np; ++c)); do
    row "sequential on core $c" "$(median "$work/core.$c")"
done
row "sequential, every core" "$m_alone"
row "$np sequential side by side" "$m_side" \
    "$(awk -v a="$m_side" -v b="$m_alone" -v n="$np" 'BEGIN { printf " (%.2fx one alone: what the cores give %d processes)", a / b, n }')"
row "mpirun -np $np" "$m_dist"
printf '  %-36s %8.2fx\n' "speed-up (sequential / distributed)" "$(awk -v a="$m_alone" -v b="$m_dist" 'BEGIN { print a / b }')"
