#!/usr/bin/env bash
# Proves that the module's CMakeLists.txt also works in-tree: builds ns-3.37
# from Debian's source package with gpu-fabric copied to contrib/gpu-fabric,
# then runs the module's ns-3 TestSuite through ns-3's test runner and one
# example through ./ns3 run.
#   NS3_SRC_CACHE  where the ns-3 source tree is kept (default /var/cache/gpu-fabric)
#   JOBS           parallel build jobs (default: nproc)
#   IN_TREE_IP=1   also enable ns-3's internet, applications, traffic-control
#                  and flow-monitor modules and run the IP example over fabric
#                  links (fabric-ip-incast; longer build)
# Needs a deb-src line for bookworm (added to sources.list.d if absent).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${NS3_SRC_CACHE:-/var/cache/gpu-fabric}"
jobs="${JOBS:-$(nproc)}"

"$root/scripts/install-deps.sh"
mkdir -p "$cache"
tree="$(ls -d "$cache"/ns3-*/ns-3.37 2>/dev/null | head -n 1 || true)"
if [ -z "$tree" ]; then
  "$root/scripts/add-deb-src.sh"
  (cd "$cache" && apt-get source -qq ns3)
  tree="$(ls -d "$cache"/ns3-*/ns-3.37 | head -n 1)"
fi
echo "check-in-tree: ns-3 source tree at $tree"

# ./ns3 run breaks under a folder named src: work in a copy whose path has none.
work="${IN_TREE_WORK:-/tmp/gpu-fabric-in-tree}"
if [ ! -d "$work/ns-3.37" ]; then
  mkdir -p "$work"
  cp -a "$tree" "$work/ns-3.37"
fi
rm -rf "$work/ns-3.37/contrib/gpu-fabric"
mkdir -p "$work/ns-3.37/contrib/gpu-fabric"
# the committed module (what a user clones), else the working files
if git -C "$root" rev-parse HEAD > /dev/null 2>&1; then
  git -C "$root" archive HEAD | tar -C "$work/ns-3.37/contrib/gpu-fabric" -xf -
else
  (cd "$root" && tar --exclude=./build --exclude=./out -cf - .) \
    | tar -C "$work/ns-3.37/contrib/gpu-fabric" -xf -
fi

cd "$work/ns-3.37"
# ns-3 never rewrites a header stub that exists: drop the module's old ones.
if [ -d build/include/ns3 ]; then
  grep -l "contrib/gpu-fabric" build/include/ns3/*.h 2>/dev/null | xargs -r rm -f
fi
# csma must be enabled or ns-3.37's test-runner fails to link with a subset.
modules="core;network;csma;gpu-fabric"
if [ "${IN_TREE_IP:-0}" = 1 ]; then
  modules="$modules;internet;applications;traffic-control;flow-monitor"
fi
./ns3 configure -d release --enable-examples --enable-tests \
  --enable-modules="$modules" > configure.log 2>&1 \
  || { tail -50 configure.log; exit 1; }
./ns3 build -j "$jobs"
runner="$(ls build/utils/ns3.37-test-runner* | head -n 1)"
"$runner" --suite=gpu-fabric --verbose
./ns3 run --no-build "hb-domain-messages --bytes=1000000"
if [ "${IN_TREE_IP:-0}" = 1 ]; then
  ./ns3 run --no-build "fabric-ip-incast --bytes=200000"
fi
echo "check-in-tree: OK (in-tree build, ns-3 TestSuite and example)"
