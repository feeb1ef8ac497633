#!/usr/bin/env bash
# Run the official MCP conformance suite against this project's example server
# and client (examples/conformance/), at spec versions 2025-11-25 and 2026-07-28.
#
#   scripts/conformance.sh            # or: make conformance
#
# Installs the pinned suite with npm into .conformance/ (git-ignored), with a
# Node 22 binary from the npm package node-linux-<arch>@22 when the machine's
# node is older; starts examples/conformance/server.py on a free port; runs
# `server --suite all` and `client --suite all` at each spec version; stops the
# server on every exit path; also runs the server extension scenarios whose
# names start with a prefix in CONFORMANCE_EXTENSIONS (default "tasks-": the
# 2026-07-28 tasks extension), which --spec-version never selects, one
# --scenario at a time; prints one line per scenario and a closing
# "N passed, M failed" line. Exit status is non-zero when a scenario fails that
# examples/conformance/expected-failures.txt does not list.
#
# Environment: PYTHON (default .venv/bin/python), CONFORMANCE_PORT (default: a
# free port), CONFORMANCE_SPECS (default "2025-11-25 2026-07-28"),
# CONFORMANCE_MODES (default "server client"), CONFORMANCE_TIMEOUT (ms per
# scenario, default 300000), CONFORMANCE_SCENARIO (run just this scenario),
# CONFORMANCE_CLIENT_EXTENSIONS (extension scenarios to run too, once each, in
# client mode: `--spec-version` never selects them; default the two of the
# io.modelcontextprotocol/oauth-client-credentials extension, machine-to-machine
# client_credentials with client_secret_basic and with private_key_jwt, which
# this project implements; "" for none), CONFORMANCE_SERVER_EXTENSIONS (name
# prefixes of the server's extension scenarios to run, default "tasks-": the
# 2026-07-28 tasks extension, SEP-2663; "" for none).
#
# The timeout is a hang guard, not a speed limit: the client suite starts all
# its ~30 clients at once, and on a loaded machine a Python client can take a
# minute just to start, which is no failure of it. The client command starts
# with `exec` so that the suite's kill at the timeout ends the client itself:
# the suite runs the command through `sh -c`, and dash (Debian's sh) does not
# exec it, so the kill would end only the shell and the suite would wait for
# a hung client for ever.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The checkout's packages first, whatever the environment's install of them says.
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

SUITE_VERSION="0.2.0-alpha.12"
NODE_MAJOR=22
INSTALL_DIR="$ROOT/.conformance"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
SPECS="${CONFORMANCE_SPECS:-2025-11-25 2026-07-28}"
MODES="${CONFORMANCE_MODES:-server client}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT:-300000}"
CLIENT_EXTENSIONS="${CONFORMANCE_CLIENT_EXTENSIONS-auth/client-credentials-basic auth/client-credentials-jwt}"
SERVER_EXTENSIONS="${CONFORMANCE_SERVER_EXTENSIONS-tasks-}"
EXPECTED="$ROOT/examples/conformance/expected-failures.txt"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
say() { printf '==> %s\n' "$*" >&2; }

STARTED=$(now)
TIMINGS=()

# ---------------------------------------------------------------- install

node_major() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }

install_suite() {
    local t0 arch node_pkg want have
    t0=$(now)
    case "$(uname -m)" in
        x86_64 | amd64) arch=x64 ;;
        aarch64 | arm64) arch=arm64 ;;
        *) arch="$(uname -m)" ;;
    esac
    node_pkg="node-linux-$arch"
    mkdir -p "$INSTALL_DIR"
    want="{\"name\":\"mcp-sansio-conformance\",\"private\":true,\"dependencies\":{\"@modelcontextprotocol/conformance\":\"$SUITE_VERSION\""
    if [[ "$(node_major node)" -lt $NODE_MAJOR ]]; then
        want="$want,\"$node_pkg\":\"^$NODE_MAJOR\""
    fi
    want="$want}}"
    have="$(cat "$INSTALL_DIR/package.json" 2>/dev/null || true)"
    if [[ "$have" != "$want" || ! -x "$INSTALL_DIR/node_modules/.bin/conformance" ]]; then
        say "installing @modelcontextprotocol/conformance@$SUITE_VERSION into .conformance/"
        printf '%s\n' "$want" >"$INSTALL_DIR/package.json"
        (cd "$INSTALL_DIR" && npm install --no-audit --no-fund --loglevel=error >&2)
    fi
    local installed
    installed="$(sed -nE 's/.*"version": *"([^"]+)".*/\1/p' \
        "$INSTALL_DIR/node_modules/@modelcontextprotocol/conformance/package.json" | head -1)"
    if [[ "$installed" != "$SUITE_VERSION" ]]; then
        say "expected conformance $SUITE_VERSION, found ${installed:-nothing}"
        exit 2
    fi
    if [[ -x "$INSTALL_DIR/node_modules/$node_pkg/bin/node" ]]; then
        export PATH="$INSTALL_DIR/node_modules/$node_pkg/bin:$PATH"
    fi
    if [[ "$(node_major node)" -lt $NODE_MAJOR ]]; then
        say "the suite needs Node $NODE_MAJOR; found $(node --version)"
        exit 2
    fi
    say "suite $installed on node $(node --version) (ready in $(since "$t0"))"
    TIMINGS+=("install: $(since "$t0")")
}

install_suite
CONFORMANCE=("$INSTALL_DIR/node_modules/.bin/conformance")

# ----------------------------------------------------------------- server

RUN_DIR="$INSTALL_DIR/results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN_DIR"
SERVER_PID=""

stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT
trap 'stop_server; exit 143' TERM

PORT="${CONFORMANCE_PORT:-$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
URL="http://127.0.0.1:$PORT/mcp"

start_server() {
    local t0
    t0=$(now)
    "$PYTHON" "$ROOT/examples/conformance/server.py" --port "$PORT" >"$RUN_DIR/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            say "the server exited at startup:"
            cat "$RUN_DIR/server.log" >&2
            exit 2
        fi
        if "$PYTHON" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$PORT" 2>/dev/null; then
            say "server up at $URL (pid $SERVER_PID, $(since "$t0"); log: $RUN_DIR/server.log)"
            TIMINGS+=("server start: $(since "$t0")")
            return
        fi
        sleep 0.1
    done
    say "the server did not listen on port $PORT within 10s"
    exit 2
}

# ------------------------------------------------------------------ suite

RUNS=()
run_suite() {
    local mode=$1 spec=$2 out="$RUN_DIR/$1-$2" t0 selection
    mkdir -p "$out"
    t0=$(now)
    if [[ -n "${CONFORMANCE_SCENARIO:-}" ]]; then
        selection=(--scenario "$CONFORMANCE_SCENARIO")
    else
        selection=(--suite all)
    fi
    say "$mode suite at $spec"
    if [[ "$mode" == server ]]; then
        "${CONFORMANCE[@]}" server --url "$URL" "${selection[@]}" --spec-version "$spec" \
            --timeout "$TIMEOUT_MS" -o "$out" >"$out/suite.log" 2>&1 || true
    else
        "${CONFORMANCE[@]}" client --command "exec $PYTHON $ROOT/examples/conformance/client.py" \
            "${selection[@]}" --spec-version "$spec" --timeout "$TIMEOUT_MS" -o "$out" \
            >"$out/suite.log" 2>&1 || true
    fi
    TIMINGS+=("$mode $spec: $(since "$t0")")
    RUNS+=("$mode:$spec:$out")
}

run_client_extensions() {
    local out="$RUN_DIR/client-extensions" t0 scenario
    mkdir -p "$out"
    t0=$(now)
    say "client extension scenarios: $CLIENT_EXTENSIONS"
    : >"$out/suite.log"
    for scenario in $CLIENT_EXTENSIONS; do
        "${CONFORMANCE[@]}" client --command "exec $PYTHON $ROOT/examples/conformance/client.py" \
            --scenario "$scenario" --timeout "$TIMEOUT_MS" -o "$out" >>"$out/suite.log" 2>&1 || true
    done
    TIMINGS+=("client extensions: $(since "$t0")")
    RUNS+=("client:extension:$out")
}

# Extension scenarios (marked [extension] by `conformance list`) belong to no
# spec version, so the suites above never run them: each runs by name here.
run_server_extensions() {
    local out="$RUN_DIR/server-extensions" t0 name prefix picked=()
    [[ -n "$SERVER_EXTENSIONS" ]] || return 0
    while read -r name; do
        for prefix in $SERVER_EXTENSIONS; do
            if [[ "$name" == "$prefix"* ]]; then
                if [[ -z "${CONFORMANCE_SCENARIO:-}" || "$CONFORMANCE_SCENARIO" == "$name" ]]; then
                    picked+=("$name")
                fi
            fi
        done
    done < <("${CONFORMANCE[@]}" list --server | sed -nE 's/^ *- ([A-Za-z0-9_-]+) \[extension\].*/\1/p')
    [[ ${#picked[@]} -gt 0 ]] || return 0
    mkdir -p "$out"
    : >"$out/suite.log"
    t0=$(now)
    for name in "${picked[@]}"; do
        say "server extension scenario $name"
        "${CONFORMANCE[@]}" server --url "$URL" --scenario "$name" --timeout "$TIMEOUT_MS" \
            -o "$out" >>"$out/suite.log" 2>&1 || true
    done
    TIMINGS+=("server extensions: $(since "$t0")")
    RUNS+=("server:extension:$out")
}

for mode in $MODES; do
    if [[ "$mode" == server ]]; then start_server; fi
    for spec in $SPECS; do
        run_suite "$mode" "$spec"
    done
    if [[ "$mode" == server ]]; then
        run_server_extensions
        stop_server
    fi
    if [[ "$mode" == client && -n "$CLIENT_EXTENSIONS" && -z "${CONFORMANCE_SCENARIO:-}" ]]; then
        run_client_extensions
    fi
done

status=0
"$PYTHON" "$ROOT/examples/conformance/summarize.py" --expected "$EXPECTED" "${RUNS[@]}" || status=$?
TIMINGS+=("total: $(since "$STARTED")")
printf '\ntimings: %s\n' "$(IFS=';'; echo "${TIMINGS[*]}" | sed 's/;/; /g')"
printf 'results: %s\n' "$RUN_DIR"
exit "$status"
