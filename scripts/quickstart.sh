#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build (Release), run the
# flagship example.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
mkdir -p "$root/out"
cd "$root/out"
# Flagship: the same training job on rail-only, rail-optimized and classic
# fat-trees, iteration time and network cost side by side (about 10 s).
"$root/build/bin/rail-only-vs-fat-tree" --quick --json="$root/out/rail-only-vs-fat-tree.json" \
  --csv="$root/out/rail-only-vs-fat-tree.csv" --png="$root/out/rail-only-vs-fat-tree.png"
echo "results written to out/rail-only-vs-fat-tree.json, .csv and .png"
