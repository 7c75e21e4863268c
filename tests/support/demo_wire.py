"""Raw wire clients for tests of the demo server: frames as they are, nothing interpreted.

* `RawStdio`: the server as a child process, JSON-RPC lines written and read by hand.
* `RawHttp`: JSON-RPC over HTTP with httpx, SSE response bodies split into events.
* `sdk_stdio()`: the official SDK client over stdio, with the server's stderr captured.

Reads wait for an event (a line, a response) with a generous timeout as a safety net
only; nothing here sleeps to synchronise.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from mcp_notebook.demo_server import LineLog

WAIT = 30.0  # seconds: a safety net for reads that should succeed at once
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
CLIENT_INFO = {"name": "raw-test-client", "version": "0"}


def modern_meta(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


def tool_call(request_id: Any, name: str, **arguments: Any) -> dict[str, Any]:
    """A legacy tools/call request frame."""
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def initialize_params(version: str = LEGACY) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}


class RawStdio:
    """The demo server over stdio, driven line by line."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr = LineLog(self.process.stderr)  # type: ignore[arg-type]
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []  # every stdout line read so far
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self._lines.put(None)

    def __enter__(self) -> RawStdio:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> int:
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stderr.join(WAIT)
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        return self.process.returncode

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def line(self) -> str | None:
        """The next stdout line, or None at EOF."""
        line = self._lines.get(timeout=WAIT)
        if line is not None:
            self.seen.append(line)
        return line

    def reply_to(self, request_id: Any) -> dict[str, Any]:
        """Read lines until the response to `request_id`; returns it."""
        while True:
            line = self.line()
            if line is None:
                raise EOFError(f"stdout ended before the response to {request_id!r}; stderr: {self.stderr.tail()}")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.reply_to(request_id)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def initialize(self, version: str = LEGACY) -> dict[str, Any]:
        reply = self.request("init", "initialize", initialize_params(version))
        self.notify("notifications/initialized")
        return reply


def sse_events(response: httpx2.Response) -> list[str]:
    """The data of each SSE event of a whole response body."""
    events, data = [], []
    for line in response.text.splitlines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            events.append("\n".join(data))
            data = []
    if data:
        events.append("\n".join(data))
    return events


class RawHttp:
    """JSON-RPC POSTs to the demo server with httpx; the HTTP exchange stays visible."""

    ACCEPT = "application/json, text/event-stream"

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=WAIT)
        self.session_id: str | None = None

    def __enter__(self) -> RawHttp:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.http.close()

    def post(self, message: dict[str, Any], headers: dict[str, str] | None = None, session: bool = True) -> httpx2.Response:
        base = {"accept": self.ACCEPT, "content-type": "application/json"}
        if session and self.session_id:
            base["mcp-session-id"] = self.session_id
        return self.http.post(self.url, content=json.dumps(message), headers={**base, **(headers or {})})

    def initialize(self, version: str = LEGACY) -> httpx2.Response:
        params = initialize_params(version)
        response = self.post({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params})
        self.session_id = response.headers.get("mcp-session-id")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def modern(
        self,
        request_id: Any,
        method: str,
        params: dict[str, Any] | None = None,
        version: str = MODERN,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        """A modern request with matching headers (overridable: a header set to None is left out)."""
        body_params = {**(params or {}), "_meta": modern_meta(version)}
        fields = {"mcp-protocol-version": version, "mcp-method": method}
        if method == "tools/call":
            fields["mcp-name"] = body_params["name"]
        fields.update(headers or {})
        sent = {key: value for key, value in fields.items() if value is not None}
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body_params}
        return self.post(message, sent, session=False)


@asynccontextmanager
async def sdk_stdio(argv: list[str], **client_options: Any):  # type: ignore[no-untyped-def]
    """(SDK Client over stdio, LineLog of the server's stderr); the SDK reaps the process."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    read_fd, write_fd = os.pipe()
    stderr = LineLog(os.fdopen(read_fd, "rb"))
    errlog = os.fdopen(write_fd, "w")
    try:
        transport = stdio_client(StdioServerParameters(command=argv[0], args=argv[1:]), errlog=errlog)
        client = Client(transport, **client_options)
        async with client:
            errlog.close()  # the child has its copy; ours would keep the pipe open after it exits
            yield client, stderr
    finally:
        if not errlog.closed:
            errlog.close()
        stderr.join(WAIT)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
