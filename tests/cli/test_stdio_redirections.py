"""stdio serving and the stdio client with stdin/stdout as files, /dev/null or closed.

A here-document of requests in and the answers in a file out: every answer is
written, including one that is due after the input has ended, and the process
exits by itself with status 0. A closed stdin is an input that has ended; a
closed stdout drops the answers with one log line. On every backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import (
    INITIALIZE,
    INITIALIZED,
    SERVERS,
    SLOW_SERVER,
    answers,
    bash,
    call,
    jsonl,
)

REQUESTS = jsonl(INITIALIZE, INITIALIZED, call(1, "double", x=21), call(2, "double", x=2))
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
BACKENDS = ["asyncio", "trio", "sockets"]


def command(backend: str) -> str:
    """The stdio server command for a backend (sockets: no event loop, no MCPServer)."""
    if backend == "sockets":
        return f'"$PY" {SERVERS / "blocking_server.py"}'
    return f'"$PY" -m mcp_adapters run {SLOW_SERVER} --backend {backend}'


def doubled(output: str) -> dict[int, str]:
    found = answers(output)
    assert found["init"]["result"]["serverInfo"]["name"] in ("Slow", "Blocking")
    return {rid: found[rid]["result"]["content"][0]["text"] for rid in (1, 2)}


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_here_document_in_file_out(backend: str, tmp_path: Path) -> None:
    done = bash(f"{command(backend)} > answers.jsonl <<'EOF'\n{REQUESTS}EOF\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert doubled((tmp_path / "answers.jsonl").read_text()) == {1: "42", 2: "4"}
    no_traceback(done.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_in_file_out(backend: str, tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text(REQUESTS)
    done = bash(f"{command(backend)} < requests.jsonl > answers.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    assert doubled((tmp_path / "answers.jsonl").read_text()) == {1: "42", 2: "4"}
    no_traceback(done.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_in_pipe_out(backend: str, tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text(REQUESTS)
    done = bash(f"{command(backend)} < requests.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    assert doubled(done.stdout) == {1: "42", 2: "4"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipe_in_file_out(backend: str, tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text(REQUESTS)
    done = bash(f"cat requests.jsonl | {command(backend)} > answers.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    assert doubled((tmp_path / "answers.jsonl").read_text()) == {1: "42", 2: "4"}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_modern_requests_from_a_file(backend: str, tmp_path: Path) -> None:
    """2026-07-28: no handshake, every request carries its envelope."""
    requests = [call(rid, "double", x=rid) for rid in (1, 2)]
    for request in requests:
        request["params"]["_meta"] = MODERN_META
    (tmp_path / "requests.jsonl").write_text(jsonl(*requests))
    done = bash(f"{command(backend)} < requests.jsonl > answers.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    found = answers((tmp_path / "answers.jsonl").read_text())
    assert {rid: found[rid]["result"]["content"][0]["text"] for rid in (1, 2)} == {
        1: "2",
        2: "4",
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stdin", ["< /dev/null", "<&-"])
def test_empty_or_closed_stdin_is_an_input_that_ended(
    backend: str, stdin: str, tmp_path: Path
) -> None:
    done = bash(f"{command(backend)} {stdin} > answers.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "answers.jsonl").read_text() == ""
    no_traceback(done.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dev_null_stdout_takes_the_answers(backend: str, tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text(REQUESTS)
    done = bash(f"{command(backend)} < requests.jsonl > /dev/null", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "stdout is closed" not in done.stderr
    no_traceback(done.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stdin", ["< requests.jsonl", "<&-"])
def test_closed_stdout_drops_the_answers_with_one_log_line(
    backend: str, stdin: str, tmp_path: Path
) -> None:
    (tmp_path / "requests.jsonl").write_text(REQUESTS)
    done = bash(f"{command(backend)} {stdin} >&-", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("stdout is closed: the answers are dropped") == 1, done.stderr
    no_traceback(done.stderr)


def test_a_tool_that_raises_is_answered_and_logged_with_its_traceback(tmp_path: Path) -> None:
    requests = jsonl(INITIALIZE, INITIALIZED, call(1, "explode", x=7))
    done = bash(f"{command('asyncio')} > answers.jsonl <<'EOF'\n{requests}EOF\n", tmp_path)
    assert done.returncode == 0, done.stderr
    result = answers((tmp_path / "answers.jsonl").read_text())[1]["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error executing tool explode: cannot take 7"
    assert "ERROR mcp_adapters.server: Error executing tool explode" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert 'raise ValueError(f"cannot take {x}")' in done.stderr  # the tool's own line
    assert "ValueError: cannot take 7" in done.stderr


CLIENT_CASES = [
    *[(backend, "<&- >&-") for backend in BACKENDS],
    *[(backend, "< /dev/null > out.txt") for backend in BACKENDS],
    ("asyncio", "< /dev/null >&- 2>&-"),
    ("asyncio", "<&- 2> err.txt"),
]


@pytest.mark.parametrize(("backend", "redirections"), CLIENT_CASES)
def test_the_stdio_client_with_its_own_stdio_redirected(
    backend: str, redirections: str, tmp_path: Path
) -> None:
    client = SERVERS / "stdio_client.py"
    done = bash(f'"$PY" {client} result.txt {backend} {redirections}', tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "result.txt").read_text() == "42"
    if "> out.txt" in redirections:
        assert (tmp_path / "out.txt").read_text() == "double(21) = 42\n"
