"""Where a stdio round trip's CPU goes, on the server side and on the client side.

    python benchmarks/profile_stdio.py                         # CPU µs per call, both sides
    python benchmarks/profile_stdio.py --by calls --top 30     # cProfile of both sides
    python benchmarks/profile_stdio.py --by ir --side server   # callgrind instructions per call
    python benchmarks/profile_stdio.py --by ir --side client --mode 2026 --tool echo_async

The server is `benchmarks/servers/ours.py` in a child process
(`python -m mcp_adapters run ... --transport stdio`), as `benchmarks/run.py` starts it,
and our `Client` calls its tool one call at a time over the child's pipes. Every
figure counts only the calls after the warm-up:

- `--by cpu`: CPU time (user + system) per call of the server process (from
  `/proc/<pid>/stat`) and of this process (`time.process_time`), and the wall time.
- `--by calls`: cProfile of the side(s) asked for: Python calls per call, and the top
  entries by own time ("tottime") in µs per call.
- `--by ir`: `valgrind --tool=callgrind` instructions per call of one side. The side
  runs under callgrind with collection off; it is switched on after the warm-up and
  the counts are dumped after the calls (`callgrind_control`). About 50 times slower.

Instruction and call counts do not depend on the machine's load; CPU and wall time do.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import callgrind  # benchmarks/callgrind.py (this script's directory is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "benchmarks" / "servers" / "ours.py"
MODES = {"legacy": "legacy", "2026": "2026-07-28"}
WARM_UP = 300


def _serve(stats_path: str) -> None:
    """The child: the benchmark server over stdio. With a stats path it is profiled from
    SIGUSR1 (after the warm-up) to SIGTERM, when the stats are written."""
    from mcp_adapters.__main__ import main

    profiler = cProfile.Profile() if stats_path else None

    def start(signum: int, frame: Any) -> None:
        if profiler is not None:
            profiler.enable()

    def stop(signum: int, frame: Any) -> None:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(stats_path)
        os._exit(0)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGTERM, stop)
    main(["run", str(SERVER), "--transport", "stdio"])


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _drive(args: argparse.Namespace, server_stats: str, server_vg: str) -> dict[str, float]:
    from mcp_adapters import Client, StdioServerParameters

    command = [sys.executable, str(Path(__file__).resolve()), "--serve", server_stats]
    if server_vg:
        command = callgrind.command(f"{server_vg}.%p", command)
    params = StdioServerParameters(
        command[0],
        command[1:],
        cwd=str(ROOT),
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stderr=subprocess.DEVNULL if server_vg else None,
    )
    arguments = {"text": "hello world"}
    client_profiler = cProfile.Profile() if args.by == "calls" and args.side != "server" else None
    async with Client(params, mode=MODES[args.mode]) as client:
        for _ in range(WARM_UP):
            await client.call_tool(args.tool, arguments)
        pid = _child_pid()
        if server_stats:
            os.kill(pid, signal.SIGUSR1)
        await asyncio.sleep(0.05)
        if server_vg:
            callgrind.control(pid, "-i", "on")
        if args.by == "ir" and args.side == "client":
            callgrind.control(os.getpid(), "-i", "on")
        if client_profiler is not None:
            client_profiler.enable()
        server0, client0, wall0 = _cpu_of(pid), time.process_time(), time.perf_counter()
        for _ in range(args.calls):
            result = await client.call_tool(args.tool, arguments)
            if result.is_error:
                raise RuntimeError(result.content)
        server1, client1, wall1 = _cpu_of(pid), time.process_time(), time.perf_counter()
        if client_profiler is not None:
            client_profiler.disable()
            client_profiler.dump_stats(args.client_stats)
        if args.by == "ir" and args.side == "client":
            callgrind.control(os.getpid(), "-d")
            callgrind.control(os.getpid(), "-i", "off")
        if server_vg:
            callgrind.control(pid, "-d")
        os.kill(pid, signal.SIGTERM)
        await asyncio.sleep(2.0 if server_vg else 0.3)
    per = 1e6 / args.calls
    return {
        "server": (server1 - server0) * per,
        "client": (client1 - client0) * per,
        "wall": (wall1 - wall0) * per,
    }


def _child_pid() -> int:
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        return int(entry)
            except OSError:
                continue
    raise RuntimeError("the server process was not found")


def _print_stats(side: str, path: str, calls: int, top: int) -> None:
    stats = pstats.Stats(path)
    print(f"{side}: {stats.total_calls / calls:.1f} Python calls per call")  # type: ignore[attr-defined]
    if top:
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
        for (file, line, name), (_, nc, tt, _, _) in rows[:top]:
            where = f"{Path(file).name}:{line}({name})"
            print(f"  {nc / calls:6.2f} calls {1e6 * tt / calls:7.2f} µs  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", choices=("server", "client", "both"), default="both")
    parser.add_argument("--by", choices=("cpu", "calls", "ir"), default="cpu")
    parser.add_argument("--mode", choices=tuple(MODES), default="legacy")
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--calls", type=int, default=None, help="3000; 1000 with --by ir")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="with --by ir: leave the callgrind dumps in DIR (for callgrind_annotate)",
    )
    parser.add_argument("--serve", nargs=1, help=argparse.SUPPRESS)  # the child's argument
    parser.add_argument("--client-stats", help=argparse.SUPPRESS)
    parser.add_argument("--in-callgrind", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve[0])
        return
    if args.calls is None:
        args.calls = 1000 if args.by == "ir" else 3000
    if args.by == "ir" and args.side == "both":
        parser.error("--by ir measures one side at a time: --side server or --side client")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        if args.keep:
            os.makedirs(tmp, exist_ok=True)
        if args.by == "ir" and args.side == "client" and not args.in_callgrind:
            # This process itself runs under callgrind, collection off until the warm-up ends.
            out = os.path.join(tmp, "client.cg")
            subprocess.run(
                callgrind.command(out, [sys.executable, *sys.argv, "--in-callgrind"]),
                check=True,
                stderr=subprocess.DEVNULL,
            )
            print(f"client: {callgrind.instructions(out) / args.calls:,.0f} instructions per call")
            if args.keep:
                print(f"dumps: {out}.*")
            return
        server_stats = (
            os.path.join(tmp, "server.prof") if args.by == "calls" and args.side != "client" else ""
        )
        server_vg = (
            os.path.join(tmp, "server.cg") if args.by == "ir" and args.side == "server" else ""
        )
        args.client_stats = os.path.join(tmp, "client.prof")
        cpu = asyncio.run(_drive(args, server_stats, server_vg))
        if args.in_callgrind:
            return
        print(f"mode {args.mode}, tool {args.tool}, {args.calls} calls")
        if args.by == "cpu":
            print(
                f"CPU µs per call: server {cpu['server']:.1f}, client {cpu['client']:.1f};"
                f" wall {cpu['wall']:.1f} µs per call"
            )
        elif args.by == "calls":
            if server_stats:
                _print_stats("server", server_stats, args.calls, args.top)
            if args.side != "server":
                _print_stats("client", args.client_stats, args.calls, args.top)
        else:
            print(
                f"server: {callgrind.instructions(server_vg) / args.calls:,.0f} instructions per call"
            )
            if args.keep:
                print(f"dumps: {server_vg}.*")


if __name__ == "__main__":
    main()
