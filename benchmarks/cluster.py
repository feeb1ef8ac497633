"""Replicas behind nginx on this machine: throughput and tail latency by replica count,
the cost of the Redis store, and what a replica's death costs.

The deployment of docs/deploy.md, started for real by tests/cluster/harness.py's
pieces: `python -m mcp_adapters run benchmarks/servers/ours.py --transport http`
replicas configured by the environment (one key ring, one identity, one store),
a real redis-server, and nginx doing plain round robin in front. The load comes
from this process: `clients` `Client`s through nginx, each making one `echo`
call at a time for `--seconds` after a warm-up, in each protocol era ("legacy":
a session per client, held through the store; "2026": stateless requests).

    python benchmarks/cluster.py              # the full run, about 5 minutes
    python benchmarks/cluster.py --quick      # a smoke test: tiny sizes, well under a minute
    python benchmarks/cluster.py --replicas 1,2 --clients 16 --seconds 3

Scenarios:

- `scale`: 1, 2 and 4 replicas on Redis, with 16 and 64 clients;
- `store`: one replica with the in-memory store (`MCP_STORE_URL=memory:`)
  against the same on Redis, same load (the Redis row is `scale`'s one-replica
  row);
- `death`: two replicas on Redis, 16 clients; one replica is killed (SIGKILL)
  halfway: the calls that failed, the calls per second before and after, and
  the slowest call (the longest a client waited).

Every row also has the CPU seconds each party used during the measured window
(the load generator, the replicas, nginx, redis), because on a small machine
they all compete for the same cores: more replicas is more processes sharing
them, not more cores. The machine and its load average go with the figures.

Figures go to benchmarks/results/cluster-latest.json (git-ignored) and are
printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the harness lives in tests/
    sys.path.insert(0, str(ROOT))

from mcp_adapters.client import Client  # noqa: E402
from tests.cluster.harness import Cluster  # noqa: E402

APP = ROOT / "benchmarks" / "servers" / "ours.py"
RESULTS = ROOT / "benchmarks" / "results"
MODES = {"legacy": "legacy", "2026": "2026-07-28"}
ECHO = {"text": "hello world"}
#: The clock ticks /proc/<pid>/stat counts CPU time in.
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Row:
    """One measured load: who served it, how much got done, how long calls took."""

    scenario: str
    replicas: int
    store: str
    era: str
    clients: int
    calls: int
    errors: int
    seconds: float
    calls_per_s: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    cpu_s: dict[str, float] = field(default_factory=dict)
    #: CPU milliseconds per completed call: the replicas', and all parties'.
    #: On a shared machine this is the figure other work disturbs least (calls/s
    #: and latency depend on how much of the cores the run got).
    replica_cpu_ms_per_call: float | None = None
    total_cpu_ms_per_call: float | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


# ============================================================================ CPU time


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used, or 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def parties(cluster: Cluster) -> dict[str, list[int]]:
    """The processes of each party: nginx's master and workers, the replicas, redis."""
    found: dict[str, list[int]] = {"load": [os.getpid()]}
    found["replicas"] = [r.process.pid for r in cluster.replicas]
    if cluster.balancer is not None:
        master = cluster.balancer.process.pid
        found["nginx"] = [master, *_children(master)]
    if cluster.redis is not None and cluster.redis.process is not None:
        found["redis"] = [cluster.redis.process.pid]
    return found


def cpu_now(found: dict[str, list[int]]) -> dict[str, float]:
    return {party: sum(_cpu_of(pid) for pid in pids) for party, pids in found.items()}


# ================================================================================= load


@dataclass
class Calls:
    """What the clients did in the measured window: latencies of calls that
    completed, failures, and when each call ended (for the death scenario)."""

    latencies: list[float] = field(default_factory=list)
    ended_ok: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)


#: How long a measured window may be stretched to see its `min_calls` (see `load`).
STRETCH_LIMIT = 60.0


async def load(
    url: str,
    mode: str,
    clients: int,
    warmup: float,
    seconds: float,
    midway: Callable[[], None] | None = None,
    min_calls: int = 1,
) -> tuple[Calls, float]:
    """`clients` clients making one call at a time: `warmup` seconds unmeasured,
    then `seconds` measured (`midway()` runs halfway). Returns the calls and the
    measured window's start, on `time.perf_counter`.

    The window is stretched past `seconds` until `min_calls` calls have ended in
    it (for at most `STRETCH_LIMIT` seconds more): on a loaded machine a short
    window can end before any call does, and a row of no calls has no latency to
    report. The rows' rates divide by the window as it really was."""
    clock = time.perf_counter
    calls = Calls()
    measuring = False
    stop = False
    async with contextlib.AsyncExitStack() as stack:
        connected = [
            await stack.enter_async_context(Client(url, mode=mode)) for _ in range(clients)
        ]

        async def worker(client: Any) -> None:
            while not stop:
                started = clock()
                counted = measuring
                try:
                    result = await client.call_tool("echo", ECHO)
                    if result.content[0].text != "hello world":
                        raise RuntimeError(f"echo answered {result.content!r}")
                except Exception as exc:  # a replica killed mid-call, say: count it, go on
                    if counted:
                        calls.errors += 1
                        kind = type(exc).__name__
                        calls.error_kinds[kind] = calls.error_kinds.get(kind, 0) + 1
                    await anyio.sleep(0.01)
                    continue
                if counted and not stop:
                    ended = clock()
                    calls.latencies.append(ended - started)
                    calls.ended_ok.append(ended)

        async with anyio.create_task_group() as group:
            for client in connected:
                group.start_soon(worker, client)
            await anyio.sleep(warmup)
            measuring = True
            start = clock()
            if midway is None:
                await anyio.sleep(seconds)
            else:
                await anyio.sleep(seconds / 2)
                midway()
                await anyio.sleep(seconds / 2)
            stretched = clock() + STRETCH_LIMIT
            while len(calls.latencies) < min_calls and clock() < stretched:
                await anyio.sleep(0.01)
            stop = True  # each worker ends after its current call
    return calls, start


def row_of(
    scenario: str,
    replicas: int,
    store: str,
    era: str,
    clients: int,
    calls: Calls,
    seconds: float,
    cpu: dict[str, float],
) -> Row:
    lat = calls.latencies
    per_call = 1000 / len(lat) if lat else math.nan
    return Row(
        scenario=scenario,
        replicas=replicas,
        store=store,
        era=era,
        clients=clients,
        calls=len(lat),
        errors=calls.errors,
        seconds=round(seconds, 3),
        calls_per_s=round(len(lat) / seconds, 1),
        p50_ms=round(percentile(lat, 50) * 1000, 2),
        p99_ms=round(percentile(lat, 99) * 1000, 2),
        max_ms=round(max(lat, default=math.nan) * 1000, 2),
        cpu_s={party: round(used, 2) for party, used in cpu.items()},
        replica_cpu_ms_per_call=round(cpu["replicas"] * per_call, 2) if cpu and lat else None,
        total_cpu_ms_per_call=round(sum(cpu.values()) * per_call, 2) if cpu and lat else None,
        notes={"errors": calls.error_kinds} if calls.error_kinds else {},
    )


@contextlib.contextmanager
def cluster_of(workdir: Path, replicas: int, store: str) -> Iterator[Cluster]:
    """`replicas` replicas of the benchmark server behind nginx; `store` "redis"
    (a real redis-server for them) or "memory" (each its own in-memory store:
    right for one replica only)."""
    env = {"MCP_STORE_URL": "memory:"} if store == "memory" else {}
    cluster = Cluster(
        APP,
        workdir / f"{store}-{replicas}",
        size=replicas,
        env=env,
        store=store == "redis",
    )
    try:
        yield cluster
    finally:
        cluster.stop()


async def measure(
    cluster: Cluster,
    scenario: str,
    replicas: int,
    store: str,
    era: str,
    clients: int,
    settings: argparse.Namespace,
) -> Row:
    found = parties(cluster)
    before = cpu_now(found)
    window: dict[str, float] = {}

    # CPU is read around the measured window only: sampled when it starts
    # (after the warm-up, from inside the load) and when it ends.
    async def run() -> tuple[Calls, float]:
        async def mark() -> None:
            await anyio.sleep(settings.warmup)
            window.update(cpu_now(found))

        async with anyio.create_task_group() as group:
            group.start_soon(mark)
            result = await load(cluster.url, MODES[era], clients, settings.warmup, settings.seconds)
        return result

    calls, start = await run()
    elapsed = time.perf_counter() - start
    after = cpu_now(found)
    base = window or before
    cpu = {party: after[party] - base.get(party, 0.0) for party in after}
    return row_of(scenario, replicas, store, era, clients, calls, elapsed, cpu)


async def death(cluster: Cluster, era: str, clients: int, settings: argparse.Namespace) -> Row:
    """Two replicas, one killed halfway through the measured window."""
    killed_at: list[float] = []

    def kill() -> None:
        killed_at.append(time.perf_counter())
        cluster.replicas[0].kill()

    calls, start = await load(
        cluster.url, MODES[era], clients, settings.warmup, settings.seconds, midway=kill
    )
    end = time.perf_counter()
    (at,) = killed_at
    before = sum(1 for t in calls.ended_ok if t < at)
    after = sum(1 for t in calls.ended_ok if t >= at)
    row = row_of("death", 2, "redis", era, clients, calls, end - start, {})
    row.notes.update(
        {
            "calls_per_s_before": round(before / (at - start), 1),
            "calls_per_s_after": round(after / (end - at), 1),
        }
    )
    return row


# ============================================================================ reporting


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def table(rows: Sequence[Row]) -> str:
    header = [
        "scenario",
        "replicas",
        "store",
        "era",
        "clients",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "errors",
        "CPU ms/call: replicas, all",
        "CPU s: load / replicas / nginx / redis",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for r in rows:
        cpu = " / ".join(
            f"{r.cpu_s[p]:.1f}" if p in r.cpu_s else "-"
            for p in ("load", "replicas", "nginx", "redis")
        )
        if r.scenario == "death":
            cpu = (
                f"before {r.notes['calls_per_s_before']}/s, after "
                f"{r.notes['calls_per_s_after']}/s; failed: {r.notes.get('errors', {})}"
            )
        per_call = (
            "-"
            if r.total_cpu_ms_per_call is None
            else f"{r.replica_cpu_ms_per_call:.2f}, {r.total_cpu_ms_per_call:.2f}"
        )
        cells = [
            r.scenario,
            str(r.replicas),
            r.store,
            r.era,
            str(r.clients),
            f"{r.calls_per_s:,.0f}",
            f"{r.p50_ms:.1f}",
            f"{r.p99_ms:.1f}",
            f"{r.max_ms:.0f}",
            str(r.errors),
            per_call,
            cpu,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ================================================================================= main


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--replicas", help="comma-separated replica counts (default 1,2,4)")
    parser.add_argument("--clients", help="comma-separated client counts (default 16,64)")
    parser.add_argument("--eras", default="legacy,2026", help="legacy, 2026 or both")
    parser.add_argument("--seconds", type=float, help="measured seconds per row (default 5)")
    parser.add_argument("--warmup", type=float, help="unmeasured seconds first (default 1)")
    parser.add_argument(
        "--scenarios", default="scale,store,death", help="any of scale, store, death"
    )
    parser.add_argument("--output", type=Path, help="the JSON report (default in results/)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.replicas = [int(n) for n in (args.replicas or ("1,2" if quick else "1,2,4")).split(",")]
    args.clients = [int(n) for n in (args.clients or ("2" if quick else "16,64")).split(",")]
    args.eras = [era for era in args.eras.split(",") if era]
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    args.seconds = args.seconds if args.seconds is not None else (0.5 if quick else 5.0)
    args.warmup = args.warmup if args.warmup is not None else (0.2 if quick else 1.0)
    for era in args.eras:
        if era not in MODES:
            parser.error(f"unknown era {era!r} (legacy, 2026)")
    for scenario in args.scenarios:
        if scenario not in ("scale", "store", "death"):
            parser.error(f"unknown scenario {scenario!r}")
    return args


async def run(settings: argparse.Namespace, workdir: Path) -> list[Row]:
    rows: list[Row] = []

    def say(row: Row) -> None:
        rows.append(row)
        print(
            f"{row.scenario} {row.replicas}x {row.store} {row.era} c{row.clients}: "
            f"{row.calls_per_s:,.0f} calls/s, p99 {row.p99_ms:.1f} ms, {row.errors} errors",
            file=sys.stderr,
            flush=True,
        )

    counts = sorted(set(settings.replicas))
    if "store" in settings.scenarios and 1 not in counts:
        counts.insert(0, 1)  # the store comparison is against one replica on Redis
    for replicas in counts:
        if "scale" not in settings.scenarios and replicas != 1:
            continue
        with cluster_of(workdir, replicas, "redis") as cluster:
            for era in settings.eras:
                for clients in settings.clients:
                    scenario = "scale" if replicas in settings.replicas else "store"
                    say(await measure(cluster, scenario, replicas, "redis", era, clients, settings))
    if "store" in settings.scenarios:
        with cluster_of(workdir, 1, "memory") as cluster:
            for era in settings.eras:
                for clients in settings.clients:
                    say(await measure(cluster, "store", 1, "memory", era, clients, settings))
    if "death" in settings.scenarios:
        clients = min(settings.clients)
        for era in settings.eras:
            with cluster_of(workdir, 2, "redis") as cluster:
                say(await death(cluster, era, clients, settings))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse(argv)
    load_before = loadavg()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="mcp-cluster-bench-") as workdir:
        rows = anyio.run(run, settings, Path(workdir))
    report: dict[str, Any] = {
        "machine": machine(),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "wall_seconds": round(time.time() - started, 1),
        "settings": {
            "replicas": settings.replicas,
            "clients": settings.clients,
            "eras": settings.eras,
            "seconds": settings.seconds,
            "warmup": settings.warmup,
            "scenarios": settings.scenarios,
        },
        "rows": [asdict(row) for row in rows],
    }
    output = settings.output or RESULTS / "cluster-latest.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    info = report["machine"]
    print(
        f"{info['nproc']} cores ({info['cpu']}), Python {info['python']}; load average "
        f"{load_before} before, {report['loadavg_after']} after; {report['wall_seconds']} s"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
