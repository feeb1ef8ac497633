"""Plain HTTP/1.1 requests to the balancer, for what the tests must control by hand
(a GET stream read event by event, resumed with a chosen `Last-Event-ID`)."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from tests.timing import HANG

VERSION = "2025-11-25"


class Raw:
    """A legacy session spoken by hand, one TCP connection per request."""

    def __init__(self, url: str, version: str = VERSION) -> None:
        self.version = version
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path
        self.session_id: str | None = None
        self._next_id = 1

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=HANG)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"accept": accept, "mcp-protocol-version": self.version}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    def post(self, message: Any) -> tuple[int, list[dict[str, Any]]]:
        """Send one message (or a 2025-03-26 batch); the status and the JSON-RPC
        messages of the answer (a batch's answers as they come)."""
        response = self.send(message)
        body = response.read().decode()
        response.conn.close()
        if self.session_id is None:
            self.session_id = response.getheader("mcp-session-id")
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            found = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
            return response.status, [m for m in found if m]
        if not body:
            return response.status, []
        answer = json.loads(body)
        return response.status, answer if isinstance(answer, list) else [answer]

    def send(self, message: Any) -> _Response:
        """POST a message and return the response unread (a stream to read as it comes)."""
        conn = self._connection()
        headers = self._headers("application/json, text/event-stream")
        headers["content-type"] = "application/json"
        conn.request("POST", self.path, json.dumps(message).encode(), headers)
        response = conn.getresponse()
        return _Response(conn, response)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        status, answers = self.post(message)
        assert status == 200, (status, answers)
        (answer,) = [a for a in answers if a.get("id") == rid]
        return answer

    def notify(self, method: str) -> None:
        status, _ = self.post({"jsonrpc": "2.0", "method": method})
        assert status == 202

    def open(self, capabilities: dict[str, Any] | None = None) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": self.version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def stream(self, last_event_id: str | None = None) -> Stream:
        conn = self._connection()
        headers = self._headers("text/event-stream")
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        conn.request("GET", self.path, headers=headers)
        response = conn.getresponse()
        return Stream(conn, response)


class _Response:
    """An HTTP response and the connection it came on."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse):
        self.conn = conn
        self.response = response
        self.status = response.status

    def read(self) -> bytes:
        return self.response.read()

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self.response.getheader(name, default)

    def stream(self) -> Stream:
        """The body as server-sent events, read one at a time."""
        return Stream(self.conn, self.response)


class Stream:
    """An open GET stream, read one server-sent event at a time."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse):
        self.conn = conn
        self.response = response
        self.status = response.status

    def next_event(self) -> tuple[str | None, dict[str, Any] | None]:
        """(id, the JSON-RPC message) of the next event; None data for a priming one."""
        event_id: str | None = None
        data: list[str] = []
        while True:
            line = self.response.fp.readline()
            if not line:
                raise EOFError("the stream ended")
            text = line.decode().rstrip("\r\n")
            if text == "":
                if event_id is None and not data:
                    continue  # a comment-only block (keep-alive)
                joined = "\n".join(data)
                return event_id, json.loads(joined) if joined else None
            if text.startswith(":"):
                continue
            name, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                event_id = value
            elif name == "data":
                data.append(value)

    def next_message(self) -> tuple[str, dict[str, Any]]:
        """The next event that carries a message (priming events skipped)."""
        while True:
            event_id, message = self.next_event()
            if message is not None:
                assert event_id is not None
                return event_id, message

    def close(self) -> None:
        self.conn.close()
