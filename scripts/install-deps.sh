#!/usr/bin/env bash
# Install the Debian packages hfx needs to build and test, only those that are missing.
set -euo pipefail
pkgs=(cmake make gcc g++ pkgconf libjansson-dev libpcre2-dev zlib1g-dev libcmocka-dev python3-venv strace)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
