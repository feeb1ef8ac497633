#!/usr/bin/env bash
# The Redis store tests (tests/store/) start real redis-server processes of
# their own, on free loopback ports. Make sure the binary is there: install it
# with apt-get on a Debian-family machine (as root, or through sudo), or say
# how to get it. Never leaves a Redis service running: the package's own
# service is stopped and disabled right after an install made here.
set -uo pipefail

command -v redis-server >/dev/null 2>&1 && exit 0

hint="install Redis >= 7.0 so that redis-server is on PATH (Debian/Ubuntu: apt-get install -y redis-server; Fedora: dnf install redis; macOS: brew install redis)"

if ! command -v apt-get >/dev/null 2>&1; then
    echo "redis-server is missing (the Redis store tests need it): $hint" >&2
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    echo "redis-server is missing and installing it needs root: sudo apt-get install -y redis-server" >&2
    exit 0
fi

echo "installing redis-server with apt-get (the Redis store tests need it)"
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -qq redis-server >/dev/null 2>&1; then
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1
    if ! "${sudo[@]}" apt-get install -y -qq redis-server >/dev/null; then
        echo "could not install redis-server: $hint" >&2
        exit 0
    fi
fi
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
    "${sudo[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
command -v redis-server >/dev/null 2>&1 || echo "redis-server still missing: $hint" >&2
exit 0
