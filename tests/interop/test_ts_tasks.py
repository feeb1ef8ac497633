"""The TypeScript SDK v1 client runs 2025-11-25 tasks on our server (docs/tasks.md).

node/peers/tasks_client.mjs (`@modelcontextprotocol/sdk` 1.32.2, its
`client.experimental.tasks`) starts examples/tasks_server.py over stdio and
drives every task path its client has: a task-augmented call polled to its
result, one that asks the user midway (the SDK calls `tasks/result` on
`input_required`, and the question arrives on it, tagged with the task), and
one cancelled with `tasks/cancel`, then listed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import ROOT, START_TIMEOUT, tagged_env

PEER = ROOT / "node" / "peers" / "tasks_client.mjs"
SERVER = ROOT / "examples" / "tasks_server.py"


@pytest.fixture(scope="module")
def node() -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "node-env.sh")],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"the TypeScript peers need npm:\n{done.stderr}"
    return done.stdout.strip()


def test_the_ts_v1_client_runs_tasks_on_our_server(node: str) -> None:
    done = subprocess.run(
        [node, str(PEER), sys.executable, str(SERVER)],
        cwd=ROOT,
        env=tagged_env("test"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT * 2,
    )
    assert done.returncode == 0, done.stderr
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert steps["tools"]["support"] == {
        "render": "optional",
        "approve": "required",
        "wait_forever": "optional",
    }
    render = steps["render"]
    assert render["types"][0] == "taskCreated" and render["types"][-1] == "result"
    assert render["text"] == "rendered 3 frames"
    approve = steps["approve"]
    assert approve["text"] == "invoice 7: approved", approve
    assert set(approve["elicitMeta"]) == {"io.modelcontextprotocol/related-task"}
    assert steps["cancel"] == {
        "step": "cancel",
        "cancelled": "cancelled",
        "after": "cancelled",
        "listed": 3,
    }
