#!/usr/bin/env bash
# Installs the Debian 12 packages gpu-fabric needs, and only those missing.
# Idempotent: when everything is present it touches nothing (no apt update).
#
# --mpi (or GPU_FABRIC_MPI=1): also what distributed runs need: Open MPI,
# Debian's source entry for ns3, and an ns-3.37 built with MPI from that
# source package into a cache outside the checkout (scripts/build-ns3-mpi.sh;
# once, about 2 minutes; later calls reuse it).
set -euo pipefail
mpi="${GPU_FABRIC_MPI:-0}"
for arg in "$@"; do
  case "$arg" in
    --mpi) mpi=1 ;;
    *) echo "install-deps: unknown argument '$arg' (allowed: --mpi)" >&2; exit 2 ;;
  esac
done

packages=(
  cmake g++ make
  # scripts/build.sh compiles through it when it is there
  ccache
  # ns-3.37: find_package(ns3) also needs the ns3 package (its *-creator
  # programs) and the -dev packages of what libns3-core links.
  libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev libpython3-dev
  libboost-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev googletest
  # Python bindings: pybind11, and the interpreter and headers it builds for
  pybind11-dev python3 python3-dev
  gnuplot-nox
  # the tests decode the module's PCAP captures with it (Wireshark's dissectors)
  tshark
  # faster allocator linked into the example and benchmark programs
  libmimalloc-dev
  # bench/event-cost-valgrind.py counts the event cost under it (a test runs it)
  valgrind
  # Chakra execution traces (chakra-replay): protobuf's C++ library and
  # compiler; the tests write traces with Python's protobuf, as Chakra does
  libprotobuf-dev protobuf-compiler python3-protobuf
  # MSCCL algorithm XML: schedules exported to and imported from it
  # (model/collective/msccl-xml.cc, linked privately)
  libpugixml-dev
)

if [ "$mpi" = 1 ]; then
  # Open MPI, and apt-get source's extraction (dpkg-dev) of ns3's package
  packages+=(libopenmpi-dev openmpi-bin dpkg-dev bzip2 xz-utils)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "$mpi" = 1 ]; then
  here="$(cd "$(dirname "$0")" && pwd)"
  prefix="${GPU_FABRIC_NS3_MPI_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-fabric/ns-3.37-mpi}"
  if [ ! -f "$prefix/.gpu-fabric-recipe" ]; then
    "$here/add-deb-src.sh"
  fi
  "$here/build-ns3-mpi.sh" > /dev/null
  [ -f "$prefix/.gpu-fabric-recipe" ] || { echo "install-deps: ns-3 with MPI was not built" >&2; exit 1; }
  echo "install-deps: ns-3.37 with MPI in $prefix"
fi
