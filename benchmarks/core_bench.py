"""Core-only benchmark: client and server connections back to back through bytes.

Each case runs full round trips with no event loop: the client encodes, the
server decodes, validates and answers, the client decodes and validates. The
floor is the same four messages through stdlib `json.loads` + `json.dumps`,
measured in the same run, so the ratio is comparable across machines.

    python benchmarks/core_bench.py [--seconds 1.0] [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

from mcp_core import ClientConfig, RequestReceived, ResponseReceived, ServerConfig
from mcp_core.testing import ConnectionPair

ARGS = {"text": "hello world"}
KEYS = (b"benchmark-key-benchmark-key-0123",)


def _pair(mode: str, *, elicitation: bool = False) -> ConnectionPair:
    server = ServerConfig(
        name="bench", capabilities={"tools": {}}, request_state_keys=KEYS if elicitation else ()
    )
    client = ClientConfig(mode=mode, capabilities={"elicitation": {}} if elicitation else None)
    # A sealing server needs the wall clock with its input (the handshake's too).
    pair = ConnectionPair(server, client, wall_clock=(lambda: 1_000.0) if elicitation else None)
    pair.connect()
    return pair


def tools_call(mode: str) -> Callable[[int], None]:
    pair = _pair(mode)
    client, server = pair.client, pair.server

    def run(n: int) -> None:
        for _ in range(n):
            client.send_request("tools/call", {"name": "echo", "arguments": ARGS})
            request = server.receive_data(client.data_to_send())[0]
            assert isinstance(request, RequestReceived)
            text = request.params.arguments["text"]
            server.send_result(
                request.request_id,
                {
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": {"result": text},
                },
            )
            response = client.receive_data(server.data_to_send())[0]
            assert isinstance(response, ResponseReceived)

    return run


FORM = {
    "message": "Book a table?",
    "requestedSchema": {
        "type": "object",
        "properties": {"date": {"type": "string"}, "guests": {"type": "integer"}},
        "required": ["date"],
    },
}
ANSWER = {"action": "accept", "content": {"date": "2025-12-27", "guests": 2}}


def elicitation_legacy() -> Callable[[int], None]:
    """tools/call -> elicitation/create -> answer -> result: two round trips per call."""
    pair = _pair("legacy", elicitation=True)
    client, server = pair.client, pair.server

    def run(n: int) -> None:
        for _ in range(n):
            client.send_request("tools/call", {"name": "book", "arguments": ARGS})
            call = server.receive_data(client.data_to_send(), wall_time=1_000.0)[0]
            assert isinstance(call, RequestReceived)
            server.send_request("elicitation/create", FORM, related_request_id=call.request_id)
            ask = client.receive_data(server.data_to_send())[0]
            assert isinstance(ask, RequestReceived)
            client.send_result(ask.request_id, ANSWER)
            answer = server.receive_data(client.data_to_send(), wall_time=1_000.0)[0]
            assert isinstance(answer, ResponseReceived)
            server.send_result(call.request_id, {"content": [{"type": "text", "text": "Booked"}]})
            done = client.receive_data(server.data_to_send())[0]
            assert isinstance(done, ResponseReceived)

    return run


def elicitation_modern() -> Callable[[int], None]:
    """tools/call -> InputRequiredResult (sealed state) -> answer -> retry -> result."""
    pair = _pair("2026-07-28", elicitation=True)
    client, server = pair.client, pair.server
    ask_for = {"date": {"method": "elicitation/create", "params": FORM}}
    now = 1_000.0

    def run(n: int) -> None:
        for _ in range(n):
            client.send_request("tools/call", {"name": "book", "arguments": ARGS})
            call = server.receive_data(client.data_to_send(), wall_time=now)[0]
            assert isinstance(call, RequestReceived)
            server.send_input_required(call.request_id, ask_for, {"step": 1})
            ask = client.receive_data(server.data_to_send())[0]
            assert isinstance(ask, RequestReceived)
            client.send_result(ask.request_id, ANSWER)
            retry = server.receive_data(client.data_to_send(), wall_time=now)[0]
            assert isinstance(retry, RequestReceived) and retry.context.input_responses
            server.send_result(retry.request_id, {"content": [{"type": "text", "text": "Booked"}]})
            done = client.receive_data(server.data_to_send())[0]
            assert isinstance(done, ResponseReceived)

    return run


def floor() -> Callable[[int], None]:
    """The same four messages of a tools/call round trip through stdlib json alone."""
    messages = [
        json.dumps(m, separators=(",", ":")).encode()
        for m in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": ARGS},
            },
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}]}},
        )
    ]

    def run(n: int) -> None:
        loads, dumps = json.loads, json.dumps
        for _ in range(n):
            for raw in messages:  # encode+decode on each side: four messages
                dumps(loads(raw))
                dumps(loads(raw))

    return run


CASES: dict[str, Callable[[], Callable[[int], None]]] = {
    "floor: stdlib json, 4 messages": floor,
    "tools/call legacy (2025-11-25)": lambda: tools_call("legacy"),
    "tools/call 2026-07-28": lambda: tools_call("2026-07-28"),
    "elicitation legacy (elicitation/create)": elicitation_legacy,
    "elicitation 2026-07-28 (InputRequired + retry)": elicitation_modern,
}


def measure(run: Callable[[int], None], seconds: float) -> float:
    """Round trips per second over about `seconds`, after a short warm-up."""
    run(200)
    n = 500
    while True:
        start = time.perf_counter()
        run(n)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed
        n = max(n * 2, int(n * seconds / max(elapsed, 1e-6)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per case per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is reported")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    runners = {name: make() for name, make in CASES.items()}
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, run in runners.items():  # interleaved, so drift hits every case alike
            samples[name].append(measure(run, args.seconds))
    floor_rate = statistics.median(samples["floor: stdlib json, 4 messages"])
    print(f"{'case':48} {'round trips/s':>14} {'us each':>9} {'vs floor':>9}")
    report = {}
    for name, values in samples.items():
        rate = statistics.median(values)
        report[name] = {
            "median_per_s": rate,
            "samples": values,
            "ratio_to_floor": rate / floor_rate,
        }
        print(f"{name:48} {rate:14,.0f} {1e6 / rate:9.1f} {rate / floor_rate:9.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
