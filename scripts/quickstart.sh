#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build (Release), run the
# flagship example.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
mkdir -p "$root/out"
"$root/build/bin/hb-domain-messages" --json="$root/out/hb-domain-messages.json"
echo "results written to out/hb-domain-messages.json"
