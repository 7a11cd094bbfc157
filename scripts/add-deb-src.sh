#!/usr/bin/env bash
# Makes Debian's source packages of bookworm reachable (a deb-src entry, added
# only if apt cannot already fetch ns3's source package), for
# scripts/build-ns3-mpi.sh and scripts/check-in-tree.sh.
set -euo pipefail
if apt-get source --print-uris -qq ns3=3.37-2 > /dev/null 2>&1; then
  exit 0
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
echo "add-deb-src: adding Debian's deb-src entry (for ns3's source package)" >&2
"${sudo_cmd[@]}" tee /etc/apt/sources.list.d/gpu-fabric-deb-src.sources > /dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
"${sudo_cmd[@]}" apt-get update -qq
