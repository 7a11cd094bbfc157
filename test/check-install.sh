#!/usr/bin/env bash
# Installs the built module into a scratch prefix and builds and runs a
# separate CMake project that finds it with find_package(gpu-fabric); the
# installed Python module (if built) imports.
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
# the by-name helpers are module API; the programs' support library is not
for header in program-flags.h topology-helper.h transport-helper.h; do
  if [ ! -e "$work/prefix/include/ns3/$header" ]; then
    echo "ns3/$header is not installed" >&2
    exit 1
  fi
done
if [ -e "$work/prefix/include/ns3/program-support.h" ] \
  || grep -q 'program-support' "$work/prefix/include/ns3/gpu-fabric-module.h" \
  || ls "$work"/prefix/lib*/libgpu-fabric-program-support* > /dev/null 2>&1 \
  || grep -rq 'program-support' "$work"/prefix/lib*/cmake/gpu-fabric/; then
  echo "the programs' support library is installed or exported as module API" >&2
  exit 1
fi
# internal headers (*-internal.h) stay in the source tree
if find "$work/prefix" -name '*-internal.h' | grep -q .; then
  echo "an internal header was installed:" >&2
  find "$work/prefix" -name '*-internal.h' >&2
  exit 1
fi
cmake -S "$src/test/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/consumer/consumer"
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/consumer/by-name"
# the consumer's build is its own: the module passes no definitions to it
if grep -q 'NS3_LOG_ENABLE\|NS3_ASSERT_ENABLE' "$work/prefix"/lib*/cmake/gpu-fabric/*.cmake; then
  echo "the exported target passes NS3_LOG_ENABLE or NS3_ASSERT_ENABLE to consumers" >&2
  exit 1
fi
# the installed Python module loads the installed library by itself (RPATH)
for module in "$work"/prefix/lib/python3*/dist-packages/gpu_fabric*.so; do
  [ -e "$module" ] || continue
  PYTHONPATH="$(dirname "$module")" /usr/bin/python3 -c \
    'import gpu_fabric as g; assert g.HbDomainPreset.Get("dgx-h100").gpusPerDomain == 8; print("python: gpu_fabric imports")'
done
