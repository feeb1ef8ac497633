"""benchmarks/cluster.py at a tiny size: it runs, every scenario's rows are there
with their fields, and calls completed. No figure is judged (the machine is shared).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.timing import START

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {
    "scenario",
    "replicas",
    "store",
    "era",
    "clients",
    "calls",
    "errors",
    "seconds",
    "calls_per_s",
    "p50_ms",
    "p99_ms",
    "max_ms",
    "cpu_s",
    "replica_cpu_ms_per_call",
    "total_cpu_ms_per_call",
    "notes",
}


def test_the_cluster_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    output = tmp_path / "report.json"
    tiny = ["--quick", "--replicas", "1", "--clients", "2", "--seconds", "0.6"]
    done = subprocess.run(
        [sys.executable, "benchmarks/cluster.py", *tiny, "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=START,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(output.read_text())
    assert report["machine"]["nproc"] >= 1
    assert len(report["loadavg_before"]) == 3
    rows = report["rows"]
    assert all(set(row) == FIELDS for row in rows)
    shape = {(r["scenario"], r["replicas"], r["store"], r["era"], r["clients"]) for r in rows}
    assert shape == {
        ("scale", 1, "redis", "legacy", 2),
        ("scale", 1, "redis", "2026", 2),
        ("store", 1, "memory", "legacy", 2),
        ("store", 1, "memory", "2026", 2),
        ("death", 2, "redis", "legacy", 2),
        ("death", 2, "redis", "2026", 2),
    }
    for row in rows:
        assert row["calls"] > 0, row  # calls completed (after the kill, for death)
        if row["scenario"] != "death":  # nothing is killed there: nothing may fail
            assert row["errors"] == 0, row
            assert {"load", "replicas", "nginx"} <= set(row["cpu_s"])
            assert row["total_cpu_ms_per_call"] >= row["replica_cpu_ms_per_call"] >= 0
        else:
            assert {"calls_per_s_before", "calls_per_s_after"} <= set(row["notes"])
    # The Markdown table, a row per measurement.
    assert done.stdout.count("\n| scale |") + done.stdout.count("\n| store |") == 4
