"""The public strategies generate what they promise.

Valid messages must pass the official JSON schema of their revision and the
engine's wire models; the framing helpers must round-trip; and the atheris
entry point's property must hold on its seed corpus (so it cannot rot while
nobody runs atheris).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core import ALL_REVISIONS
from mcp_core._connection import validator
from mcp_core._versions import all_rows, lookup
from mcp_core.testing.strategies import (
    chunked,
    invalid_messages,
    json_values,
    message_bytes,
    request_ids,
    valid_messages,
    valid_responses,
)
from tests.schema_check import validate_message

CHECK = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ROOT = Path(__file__).resolve().parents[2]
_BLOBS = message_bytes(valid_messages("2025-11-25", "client"), max_size=4)


def _check_valid(message: dict[str, Any], revision: str, sender: str) -> None:
    validate_message(message, revision, sender=sender)  # type: ignore[arg-type]
    assert json.loads(json.dumps(message)) == message
    if "method" in message:
        spec = lookup(sender, message["method"], revision)  # type: ignore[arg-type]
        assert spec is not None
        if spec.params is not None:
            validator(spec.params)(message.get("params") or {})


def _valid_case(revision: str, sender: str) -> None:
    @CHECK
    @given(valid_messages(revision, sender))  # type: ignore[arg-type]
    def run(message: dict[str, Any]) -> None:
        _check_valid(message, revision, sender)

    run()


def test_valid_messages_pass_schema_and_models() -> None:
    for revision in ALL_REVISIONS:
        for sender in ("client", "server"):
            _valid_case(revision, sender)


def test_results_fit_their_method() -> None:
    for revision in ALL_REVISIONS:
        for sender in ("client", "server"):
            peer = "server" if sender == "client" else "client"
            for spec in all_rows():
                if spec.sender != peer or not spec.is_request or revision not in spec.revisions:
                    continue

                _result_case(revision, sender, spec.method, spec.result)


def _result_case(revision: str, sender: str, method: str, result: str | None) -> None:
    @settings(CHECK, max_examples=8)
    @given(valid_responses(revision, sender, methods=[method], errors=False))  # type: ignore[arg-type]
    def run(message: dict[str, Any]) -> None:
        validate_message(message, revision, sender=sender, request_method=method)  # type: ignore[arg-type]
        assert result is not None
        validator(result)(message["result"])

    run()


@CHECK
@given(invalid_messages())
def test_invalid_messages_are_single_lines(line: bytes) -> None:
    assert isinstance(line, bytes) and b"\n" not in line and b"\r" not in line


@CHECK
@given(request_ids(), json_values())
def test_ids_and_json_values_are_json(rid: int | str, value: Any) -> None:
    assert type(rid) in (int, str)
    assert json.loads(json.dumps(value, allow_nan=False)) == value


@CHECK
@given(st.data())
def test_message_bytes_and_chunked_round_trip(data: st.DataObject) -> None:
    blob = data.draw(_BLOBS)
    lines = [line for line in blob.split(b"\n") if line.strip()]
    assert len(lines) in range(1, 5) and blob.endswith(b"\n")
    for line in lines:
        json.loads(line)
    chunks = data.draw(chunked(blob))
    assert b"".join(chunks) == blob and all(chunks)
    assert len(data.draw(chunked(blob, max_chunks=2))) <= 2


def test_atheris_entry_point_holds_on_its_corpus() -> None:
    spec = importlib.util.spec_from_file_location("atheris_server", ROOT / "fuzz/atheris_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seeds = sorted((ROOT / "fuzz/corpus").iterdir())
    assert len(seeds) >= 5
    for seed in seeds:
        module.check_input(seed.read_bytes())
