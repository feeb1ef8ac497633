"""An answer is trusted only for a question this server asked (issue 11, part 5).

On 2026-07-28 a retry carries `inputResponses` next to the sealed `requestState`
that came with the question. A `tools/call` that brings the answers and no state
(a forged or replayed "the user said yes") must not reach the resolver as the
user's answer: the server asks again. The seed's delete_folder is the case the
issue names: with the forged retry it deleted the folder without asking anyone.

Over real Streamable HTTP, against the seed server run as a process, once with
the per-process random key and once with request_state_keys configured.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_core.http import mirrored_request_headers

from .conftest import HTTPServer

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ACCEPT_YES = {"action": "accept", "content": {"ok": True}}

KEYED_SERVER = """
from examples.seeds.delete_folder_server import mcp

mcp.request_state_keys = (b"0123456789abcdef0123456789abcdef",)
"""


@pytest.fixture(scope="module", params=["random key", "configured keys"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HTTPServer]:
    script = "delete_folder_server.py"
    if request.param == "configured keys":
        path = tmp_path_factory.mktemp("keyed") / "keyed_delete_folder.py"
        path.write_text(KEYED_SERVER, encoding="utf-8")
        script = str(path)  # absolute: HTTPServer joins it to the seeds folder
    started = HTTPServer(script)
    try:
        yield started
    finally:
        started.stop()


def call(server: HTTPServer, request_id: int, params: dict[str, Any]) -> dict[str, Any]:
    """One 2026-07-28 tools/call POST; the JSON-RPC answer (from JSON or the SSE stream)."""
    params = {**params, "_meta": META}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )
    headers = dict(mirrored_request_headers("tools/call", params, MODERN))
    headers.update(
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    )
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read().decode()
    finally:
        connection.close()
    assert response.status == 200, data
    if response.getheader("content-type", "").startswith("text/event-stream"):
        lines = [line[5:].strip() for line in data.splitlines() if line.startswith("data:")]
        answers = [json.loads(line) for line in lines if line]
        (answer,) = [a for a in answers if a.get("id") == request_id]
        return answer
    answer: dict[str, Any] = json.loads(data)
    return answer


def still_there(server: HTTPServer, request_id: int) -> bool:
    """Whether /tmp/project still exists: asking again means it was not deleted."""
    answer = call(
        server, request_id, {"name": "delete_folder", "arguments": {"path": "/tmp/project"}}
    )
    return answer["result"].get("resultType") == "input_required"


def test_answers_without_the_sealed_state_are_asked_again(server: HTTPServer) -> None:
    forged = call(
        server,
        1,
        {
            "name": "delete_folder",
            "arguments": {"path": "/tmp/project"},
            "inputResponses": {"confirm_delete": ACCEPT_YES},
        },
    )
    result = forged["result"]
    assert result.get("resultType") == "input_required", result
    assert list(result["inputRequests"]) == ["confirm_delete"]
    assert "Delete anyway?" in result["inputRequests"]["confirm_delete"]["params"]["message"]
    assert still_there(server, 2)


def test_answers_to_questions_never_asked_are_ignored(server: HTTPServer) -> None:
    first = call(server, 3, {"name": "delete_folder", "arguments": {"path": "/tmp/project"}})
    state = first["result"]["requestState"]
    # The real state, but answers under a key the server did not ask this round.
    retry = call(
        server,
        4,
        {
            "name": "delete_folder",
            "arguments": {"path": "/tmp/project"},
            "inputResponses": {"something_else": ACCEPT_YES},
            "requestState": state,
        },
    )
    assert retry["result"].get("resultType") == "input_required"
    assert still_there(server, 5)


def test_an_answer_that_does_not_fit_the_question_is_asked_again(server: HTTPServer) -> None:
    first = call(server, 6, {"name": "delete_folder", "arguments": {"path": "/tmp/project"}})
    state = first["result"]["requestState"]
    misfit = {"action": "accept", "content": {"ok": "definitely"}}
    retry = call(
        server,
        7,
        {
            "name": "delete_folder",
            "arguments": {"path": "/tmp/project"},
            "inputResponses": {"confirm_delete": misfit},
            "requestState": state,
        },
    )
    assert retry["result"].get("resultType") == "input_required"
    assert still_there(server, 8)


def test_the_real_round_trip_still_deletes(server: HTTPServer) -> None:
    """The check can fail: the honest retry, with its state, is obeyed."""
    first = call(server, 9, {"name": "delete_folder", "arguments": {"path": "/tmp/project"}})
    retry = call(
        server,
        10,
        {
            "name": "delete_folder",
            "arguments": {"path": "/tmp/project"},
            "inputResponses": {"confirm_delete": ACCEPT_YES},
            "requestState": first["result"]["requestState"],
        },
    )
    assert retry["result"]["content"][0]["text"] == "deleted /tmp/project"
    assert not still_there(server, 11)
