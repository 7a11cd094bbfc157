#!/usr/bin/env bash
# Builds ns-3.37 with MPI from Debian's source package (ns3 3.37-2, the
# version of libns3-dev) into a cache outside the checkout, once: only the
# modules gpu-fabric's distributed build needs (core, network, mpi; about
# 2 minutes on 2 cores). Called by `scripts/install-deps.sh --mpi`.
#
#   GPU_FABRIC_NS3_MPI_PREFIX  where it goes (default
#                              ${XDG_CACHE_HOME:-~/.cache}/gpu-fabric/ns-3.37-mpi)
# Prints the prefix on stdout (progress on stderr).
set -euo pipefail
prefix="${GPU_FABRIC_NS3_MPI_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-fabric/ns-3.37-mpi}"
version="3.37-2"
modules="core;network;mpi"
# what the cached build was made from: a change here rebuilds it
recipe="ns3 ${version}; modules ${modules}; Release; MPI $(mpicxx --showme:version 2>/dev/null | head -1)"
stamp="$prefix/.gpu-fabric-recipe"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  echo "build-ns3-mpi: cached in $prefix" >&2
  echo "$prefix"
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-fabric-ns3-mpi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "build-ns3-mpi: fetching Debian's source package ns3 ${version}" >&2
(cd "$work" && apt-get source -qq "ns3=${version}" > "$work/source.log" 2>&1) \
  || { cat "$work/source.log" >&2; echo "build-ns3-mpi: apt-get source ns3=${version} failed (deb-src entry: scripts/install-deps.sh --mpi adds it)" >&2; exit 1; }
src="$(find "$work" -maxdepth 3 -type f -name CMakeLists.txt -path '*ns-3.37/CMakeLists.txt' | head -1)"
[ -n "$src" ] || { echo "build-ns3-mpi: no ns-3.37 tree in the source package" >&2; exit 1; }
src="$(dirname "$src")"

echo "build-ns3-mpi: building ${modules} with MPI into $prefix" >&2
start=$(date +%s)
rm -rf "$prefix"
# Debian's python3, whose headers python3-dev installs: ns-3 records the
# interpreter's include path in its exported targets
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DNS3_MPI=ON \
  -DNS3_ENABLED_MODULES="${modules}" -DNS3_EXAMPLES=OFF -DNS3_TESTS=OFF \
  -DNS3_PYTHON_BINDINGS=OFF -DNS3_WARNINGS_AS_ERRORS=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j"$(nproc)" > "$work/build.log" 2>&1 \
  || { tail -50 "$work/build.log" >&2; exit 1; }
cmake --install "$work/build" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; exit 1; }
echo "$recipe" > "$stamp"
echo "build-ns3-mpi: built in $(( $(date +%s) - start )) s" >&2
echo "$prefix"
