#!/usr/bin/env bash
# Make the TypeScript SDK peers ready and print the node binary that runs them.
#
#   NODE=$(scripts/node-env.sh)     # then: "$NODE" some-peer.mjs
#
# `npm ci` installs node/package-lock.json (the TypeScript SDKs, pinned) into
# node/node_modules (git-ignored) when it is missing or older than the lock file.
# The SDKs of 2.x need Node 22: where the machine's node is older, the Node 22
# binary comes from the npm registry's node-linux-<arch> package, installed
# into node/.node22. Everything it says goes to stderr; stdout is the path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/node"
NODE_VERSION="22.23.5"
say() { printf 'node-env: %s\n' "$*" >&2; }

command -v npm >/dev/null || { say "npm is needed (Debian: apt-get install npm)"; exit 2; }
# One installer at a time: the test workers call this at once on a fresh clone,
# and two npm runs in one folder rename each other's files away (ENOENT).
if command -v flock >/dev/null; then
    exec 9>"$DIR/.node-env.lock"
    flock 9
fi
if [[ ! -d "$DIR/node_modules/@modelcontextprotocol/sdk" || "$DIR/package-lock.json" -nt "$DIR/node_modules/.package-lock.json" ]]; then
    say "npm ci in node/"
    (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

major() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }
if [[ -n "$(command -v node)" && "$(major node)" -ge 22 ]]; then
    command -v node
    exit 0
fi
case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) say "no Node 22 package for $(uname -m): install Node 22 and put it first on PATH"; exit 2 ;;
esac
BIN="$DIR/.node22/node_modules/node-linux-$arch/bin/node"
if [[ ! -x "$BIN" || "$(major "$BIN")" != 22 ]]; then
    say "installing node-linux-$arch@$NODE_VERSION into node/.node22"
    mkdir -p "$DIR/.node22"
    (cd "$DIR/.node22" && printf '{"private":true}\n' >package.json &&
        npm install --no-save --no-audit --no-fund --loglevel=error "node-linux-$arch@$NODE_VERSION" >&2)
fi
echo "$BIN"
