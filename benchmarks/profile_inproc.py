"""Where our in-process time goes: cProfile of `Client(MCPServer)` sequential echo calls.

    python benchmarks/profile_inproc.py [--mode legacy|2026] [--tool echo|echo_async|book|
        book_resolved] [--calls 5000] [--top 15] [--out profile.pstats]
    python benchmarks/profile_inproc.py --breakdown [--mode legacy|2026]

Prints the top functions by own time (tottime) and the same time summed by
package (mcp_core, mcp_adapters, anyio, asyncio, pydantic, ...), for
benchmarks/servers/ours.py served in this process.

`--breakdown` measures instead, without a profiler (whose overhead inflates
small Python functions), what one sequential call costs and what its parts cost
alone, interleaved over several rounds: the engine round trip with no loop
(benchmarks/core_bench.py), the MCPServer tool layer (argument validation, the
function and the result's wire form), one round trip through the anyio memory
streams the in-process pipe was made of until the direct link replaced it (kept
for comparison), and one bare asyncio task switch.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # benchmarks/run.py, next to this file


def package_of(filename: str, name: str = "") -> str:
    if filename.startswith("~") or filename.startswith("<"):  # a C function: guess by name
        for owner in ("pydantic_core", "select", "_contextvars", "_asyncio", "_socket"):
            if f"'{owner}." in name or f"{owner}." in name.split(" ")[-1]:
                return f"C: {owner}"
        return "C: builtins"
    path = Path(filename)
    parts = path.parts
    for marker in ("mcp_core", "mcp_adapters", "benchmarks"):
        if marker in parts:
            index = parts.index(marker)
            return "/".join(parts[index : index + 2]) if marker != "benchmarks" else marker
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1]
    if "python3" in "".join(parts):
        return "stdlib: " + path.stem
    return path.name


async def profile(mode: str, tool: str, calls: int) -> tuple[cProfile.Profile, float]:
    expected = run.BOOKED if tool.startswith("book") else "hello world"
    elicitation = tool.startswith("book")
    async with run.connected("ours", "inproc", mode, elicitation=elicitation) as client:
        call = run.call_of(client, tool, expected)
        for _ in range(200):
            await call()
        start = time.perf_counter()
        for _ in range(calls):
            await call()
        plain = (time.perf_counter() - start) / calls
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            await call()
        profiler.disable()
    return profiler, plain


async def _pipe_round_trip(n: int) -> float:
    """Seconds per round trip of one message each way over two anyio memory streams
    and two tasks: what the in-process pipe costs with no MCP at all."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](64)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](64)
    payload = b"x" * 120

    async def echo_peer() -> None:
        async for data in b_receive:
            await b_send.send(data)

    async with anyio.create_task_group() as group:
        group.start_soon(echo_peer)
        start = time.perf_counter()
        for _ in range(n):
            await a_send.send(payload)
            await a_receive.receive()
        elapsed = time.perf_counter() - start
        group.cancel_scope.cancel()
    return elapsed / n


async def _task_switch(n: int) -> float:
    """Seconds per bare asyncio task switch (future ping-pong between two tasks)."""
    import asyncio

    loop = asyncio.get_running_loop()
    box: list[asyncio.Future[None]] = [loop.create_future()]
    back: list[asyncio.Future[None]] = [loop.create_future()]

    async def peer() -> None:
        for _ in range(n):
            await box[0]
            box[0] = loop.create_future()
            back[0].set_result(None)

    task = loop.create_task(peer())
    start = time.perf_counter()
    for _ in range(n):
        box[0].set_result(None)
        await back[0]
        back[0] = loop.create_future()
    elapsed = time.perf_counter() - start
    await task
    return elapsed / n / 2


async def breakdown(mode: str, rounds: int, calls: int) -> dict[str, float]:
    import statistics

    import core_bench

    server = run.load_server("ours")
    tool = server._tools["echo"]

    def tool_layer(n: int) -> None:
        for _ in range(n):
            kwargs = tool.parse_arguments(run.ECHO_ARGS)
            tool.to_wire_result(tool.fn(**kwargs))

    core = core_bench.tools_call(run.OUR_MODE[mode])
    parts: dict[str, list[float]] = {
        "full call: Client(MCPServer), sync echo": [],
        "engine only, both ends (core_bench)": [],
        "MCPServer tool layer (validate, run, wire result)": [],
        "(for comparison) anyio memory-stream round trip, no MCP": [],
        "one asyncio task switch": [],
    }
    names = list(parts)
    async with run.connected("ours", "inproc", mode) as client:
        call = run.call_of(client, "echo", "hello world")
        for _ in range(200):
            await call()
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                await call()
            parts[names[0]].append((time.perf_counter() - start) / calls)
            start = time.perf_counter()
            core(calls)
            parts[names[1]].append((time.perf_counter() - start) / calls)
            start = time.perf_counter()
            tool_layer(calls)
            parts[names[2]].append((time.perf_counter() - start) / calls)
            parts[names[3]].append(await _pipe_round_trip(calls))
            parts[names[4]].append(await _task_switch(calls))
    return {name: statistics.median(values) for name, values in parts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", default="legacy", choices=["legacy", "2026"])
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--out", help="also save the raw pstats here")
    parser.add_argument("--breakdown", action="store_true", help="cost of the parts, no profiler")
    parser.add_argument("--rounds", type=int, default=7, help="rounds for --breakdown")
    args = parser.parse_args(argv)
    if args.breakdown:
        parts = anyio.run(breakdown, args.mode, args.rounds, args.calls, backend="asyncio")
        full = next(iter(parts.values()))
        print(f"{args.mode}: microseconds per call, median of {args.rounds} interleaved rounds")
        for name, seconds in parts.items():
            print(f"{seconds * 1e6:8.1f}  {seconds / full * 100:5.1f}%  {name}")
        return 0
    profiler, plain = anyio.run(profile, args.mode, args.tool, args.calls, backend="asyncio")
    stats = pstats.Stats(profiler)
    if args.out:
        stats.dump_stats(args.out)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    print(
        f"{args.tool}, {args.mode}: {plain * 1e6:.1f} us per call without the profiler; "
        f"{total / args.calls * 1e6:.1f} us of own time per call under it"
    )
    print()
    print(f"top {args.top} by own time (per call = own time / {args.calls} calls):")
    print(f"{'own %':>6} {'us/call':>8} {'ncalls/call':>11}  function")
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    for (filename, line, name), (_, ncalls, tottime, _, _) in rows[: args.top]:
        where = f"{package_of(filename)}:{line}" if not filename.startswith("~") else "(C)"
        print(
            f"{tottime / total * 100:6.1f} {tottime / args.calls * 1e6:8.2f} "
            f"{ncalls / args.calls:11.1f}  {name} {where}"
        )
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _, name), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_package[package_of(filename, name)] += tottime
    print()
    print("own time by package / module:")
    for package, tottime in sorted(by_package.items(), key=lambda item: item[1], reverse=True)[:20]:
        print(f"{tottime / total * 100:6.1f} {tottime / args.calls * 1e6:8.2f}  {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
