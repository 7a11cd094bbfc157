#!/usr/bin/env bash
# Configures (Release) and builds gpu-fabric in ./build (or $GPU_FABRIC_BUILD_DIR).
# Extra arguments go to cmake's configure step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GPU_FABRIC_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
