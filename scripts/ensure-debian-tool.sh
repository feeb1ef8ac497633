#!/usr/bin/env bash
# ensure-debian-tool.sh BINARY PACKAGE WHY HINT
#
# The tests start real servers of their own (redis-server for the Redis store,
# nginx as the load balancer in front of replicas), on free loopback ports.
# Make sure BINARY is there: install PACKAGE with apt-get on a Debian-family
# machine (as root, or through passwordless sudo), or print HINT, the way to get
# it elsewhere. Never leaves the package's own service running: it is stopped
# and disabled right after an install made here. Exits 0 either way: the tests
# that need the binary say so when it is missing.
set -uo pipefail

binary=$1 package=$2 why=$3 hint=$4
found() { command -v "$binary" >/dev/null 2>&1 || [ -x "/usr/sbin/$binary" ]; }

found && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "$binary is missing ($why): $hint" >&2
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    echo "$binary is missing and installing it needs root: sudo apt-get install -y $package" >&2
    exit 0
fi

echo "installing $package with apt-get ($why)"
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d 101: the package must not start its service during the install.
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod +x "$policy" && made_policy=1
fi
if ! "${sudo[@]}" apt-get install -y -qq "$package" >/dev/null 2>&1; then
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1
    "${sudo[@]}" apt-get install -y -qq "$package" >/dev/null || echo "could not install $package: $hint" >&2
fi
[ -n "$made_policy" ] && "${sudo[@]}" rm -f "$policy"
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$package" 2>/dev/null; then
    "${sudo[@]}" systemctl disable --now "$package" >/dev/null 2>&1 || true
fi
found || echo "$binary still missing: $hint" >&2
exit 0
