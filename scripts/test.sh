#!/usr/bin/env bash
# Command 2 of the README (and CI): install what is missing, build (Release),
# run every test suite with ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" -j"$(nproc)" --output-on-failure
