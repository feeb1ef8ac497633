"""Plain against coroutine tools (issue 13, item 4), this tree against another, alternated.

    python benchmarks/coro_bench.py [--base /path/to/other/tree ...] [--rounds 5]
        [--cases inproc.seq.legacy,inproc.c64.2026,stdio.seq.legacy,http.seq.legacy]
        [--seconds 0.4] [--backend asyncio|trio]

Each round runs one child process per tree (this one, "new", then each `--base`,
named by its directory; the order reversed every other round, so that a load
change hits all alike); a child
connects our client to benchmarks/servers/ours.py (in process, over stdio, or
over HTTP) and times `echo` (a plain function) and `echo_async` (a coroutine
function) in turn, `--seconds` each, three times, keeping each tool's best
(in process, calls per second of the thread's CPU time: see `_child`).
Prints calls per second per tree and case, the medians over the rounds, and the
async/plain ratio; the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


async def _child(case: str, seconds: float) -> dict[str, float]:
    # The tree under test's own benchmarks/run.py (the child runs in that tree), so that
    # its stdio and HTTP servers are started from that tree too.
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    import run

    transport, shape, mode = case.split(".")
    workers = 64 if shape == "c64" else 1
    rates: dict[str, float] = {"sync": 0.0, "async": 0.0}
    async with contextlib.AsyncExitStack() as stack:
        if transport == "http":
            url, _pid = stack.enter_context(run.http_server("ours", 30, "coro-bench-http"))
            target: Any = url
        else:
            target = transport
        client = await stack.enter_async_context(run.connected("ours", target, mode))
        calls = {
            variant: [run.call_of(client, run.TOOL[variant], "hello world")] * workers
            for variant in rates
        }
        for variant in rates:  # warm both
            await run.run_calls(calls[variant], 200, workers)
        # In process, everything runs on this thread: its CPU time, not the wall clock, is
        # what a call costs, and it is far less disturbed by a loaded machine. Over stdio
        # and HTTP the server is another process: the wall clock it is.
        clock = time.thread_time if transport == "inproc" else time.perf_counter
        for _ in range(3):
            for variant in rates:
                n, elapsed = 0, 0.0
                while elapsed < seconds:
                    start = clock()
                    sample = await run.run_calls(calls[variant], 256, workers)
                    n += sample.calls
                    elapsed += clock() - start
                rates[variant] = max(rates[variant], n / elapsed)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", action="append", default=[], help="another tree (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--cases", default="inproc.seq.legacy,inproc.seq.2026,inproc.c64.legacy,inproc.c64.2026"
    )
    parser.add_argument("--seconds", type=float, default=0.4)
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import anyio

        print(json.dumps(anyio.run(_child, args.child, args.seconds, backend=args.backend)))
        return
    trees = {"new": str(HERE.parent)}
    for base in args.base:
        trees[Path(base).name] = str(Path(base).resolve())
    print(f"load at start: {_load()}")
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for case in args.cases.split(","):
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                env = dict(os.environ, PYTHONPATH=trees[name])
                out = subprocess.run(
                    [
                        *(sys.executable, __file__, "--child", case),
                        *("--seconds", str(args.seconds), "--backend", args.backend),
                    ],
                    env=env,
                    cwd=trees[name],
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=600,
                ).stdout
                rates = json.loads(out.strip().splitlines()[-1])
                results.setdefault((case, name), []).append(rates)
                print(
                    f"{case:18} {name:10} round {round_}: sync {rates['sync']:8.0f}  "
                    f"async {rates['async']:8.0f}  plain/async {rates['sync'] / rates['async']:.2f}",
                    flush=True,
                )
    print(f"load at end: {_load()}")
    print(f"\n{'case':18} {'tree':10} {'sync/s':>8} {'async/s':>8} {'plain/async':>11}")
    for (case, name), samples in results.items():
        sync = statistics.median(s["sync"] for s in samples)
        asy = statistics.median(s["async"] for s in samples)
        ratio = statistics.median(s["sync"] / s["async"] for s in samples)
        print(f"{case:18} {name:10} {sync:8.0f} {asy:8.0f} {ratio:11.2f}")


if __name__ == "__main__":
    main()
