#!/usr/bin/env bash
# Configures (Release) and builds gpu-fabric in ./build (or $GPU_FABRIC_BUILD_DIR).
# Extra arguments go to cmake's configure step.
#
# --mpi (first argument): the distributed build, in ./build-mpi (or
# $GPU_FABRIC_BUILD_DIR), against an ns-3.37 built with MPI (installed and
# cached by scripts/install-deps.sh --mpi). It builds the library, the
# programs and the distributed test suite (ctest --test-dir build-mpi).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = "--mpi" ]; then
  shift
  build="${GPU_FABRIC_BUILD_DIR:-$root/build-mpi}"
  "$root/scripts/install-deps.sh" --mpi
  prefix="${GPU_FABRIC_NS3_MPI_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-fabric/ns-3.37-mpi}"
  set -- -DGPU_FABRIC_MPI=ON -DGPU_FABRIC_PYTHON=OFF -DCMAKE_PREFIX_PATH="$prefix" "$@"
else
  build="${GPU_FABRIC_BUILD_DIR:-$root/build}"
  "$root/scripts/install-deps.sh"
fi
# ccache (installed by install-deps.sh), as ns-3's own build uses it: a
# rebuild, another build directory or a fresh clone at another path compiles
# only what changed (paths are hashed relative to the checkout).
# GPU_FABRIC_CCACHE=0 turns it off.
if [ "${GPU_FABRIC_CCACHE:-1}" != 0 ] && command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  set -- -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@"
fi
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" ${GPU_FABRIC_BUILD_TARGETS:+--target $GPU_FABRIC_BUILD_TARGETS}
