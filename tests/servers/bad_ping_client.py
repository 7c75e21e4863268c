"""A scripted MCP client that mishandles the server's pings, as ruby-sdk #541 did: it answers
each with -32601 "Method not found" (`--answer error`) or leaves it unanswered
(`--answer ignore`). Everything else it does right: initialize, notifications/initialized,
tools/list.

Over stdio it starts the server (`-- COMMAND ARGS...`, the server's stderr passed through);
over Streamable HTTP (`--url URL`) it opens the GET stream, where a legacy server's pings
come. It stops after `--pings N` server pings (then closes stdin, or DELETEs the session),
or with `--hold SECONDS` at the first message more than SECONDS after the Nth ping (so pings
it ignores have waited that long when it hangs up: a watcher can tell them from pings the end
cut off), and prints one JSON line: {"pings": [the ids it got], "tools": [the names listed],
"session_id": the HTTP session's id or ""}.
Every read has a timeout (`--timeout`, default 60 s). For the tests of what a tap keeps
secret: `--header "NAME: VALUE"` (HTTP, repeatable) sends a header with every request, and
`--say TEXT` ends each error answer's message with TEXT ("{session}" in it: the session id).

Usage: bad_ping_client.py --answer error|ignore [--pings N] [--hold SECONDS] [--say TEXT]
                          (--url URL [--header "NAME: VALUE"]... | -- COMMAND ARGS...)
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import time
from typing import Any
from urllib.parse import urlsplit

VERSION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bad-ping-client", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def answer(ping: dict[str, Any], say: str = "") -> dict[str, Any]:
    message = f"Method not found{': ' + say if say else ''}"
    return {"jsonrpc": "2.0", "id": ping["id"], "error": {"code": -32601, "message": message}}


def is_ping(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "ping" and "id" in message


class Stdio:
    session_id = ""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.timeout = timeout

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def messages(self) -> Any:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            yield json.loads(line)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        return next(m for m in self.messages() if m.get("id") == message["id"] and "method" not in m)

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(self.timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait(self.timeout)
        self.process.stdout.close()


class Http:
    def __init__(self, url: str, timeout: float, headers: list[str]) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        for header in headers:
            name, _, value = header.partition(":")
            self.headers[name.strip()] = value.strip()
        self.stream: http.client.HTTPResponse | None = None

    @property
    def session_id(self) -> str:
        return self.headers.get("Mcp-Session-Id", "")

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        connection = self._connection()
        try:
            connection.request("POST", self.path, json.dumps(message).encode(), self.headers)
            response = connection.getresponse()
            body = response.read().decode()
            if response.getheader("mcp-session-id"):
                self.headers["Mcp-Session-Id"] = response.getheader("mcp-session-id") or ""
        finally:
            connection.close()
        if response.status >= 400:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]}")
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        return [json.loads(body)] if body.strip() else []

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        reply = self.send(message)
        if message is INITIALIZE:
            self.headers["MCP-Protocol-Version"] = VERSION
        return next(m for m in reply if m.get("id") == message["id"] and "method" not in m)

    def messages(self) -> Any:
        """The GET stream's messages."""
        connection = self._connection()
        connection.request("GET", self.path, headers={**self.headers, "Accept": "text/event-stream"})
        self.stream = response = connection.getresponse()
        if response.status != 200:
            raise RuntimeError(f"GET stream: HTTP {response.status}")
        while line := response.readline():
            text = line.decode().rstrip("\r\n")
            if text.startswith("data:") and text[5:].strip():
                yield json.loads(text[5:])

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        connection = self._connection()
        try:
            connection.request("DELETE", self.path, headers=self.headers)
            connection.getresponse().read()
        finally:
            connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer", choices=("error", "ignore"), required=True)
    parser.add_argument("--pings", type=int, default=3)
    parser.add_argument("--hold", type=float, default=0.0, help="after the Nth ping, keep going this long (seconds)")
    parser.add_argument("--say", default="", help="end each error answer's message with this ({session}: the session id)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--url")
    parser.add_argument("--header", action="append", default=[], help='HTTP: "NAME: VALUE" sent with every request')
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    peer: Stdio | Http = Http(args.url, args.timeout, args.header) if args.url else Stdio(argv, args.timeout)
    pings: list[Any] = []
    held_from: float | None = None  # when the Nth ping came (monotonic)
    try:
        peer.request(INITIALIZE)
        peer.send(INITIALIZED)
        tools = [tool["name"] for tool in peer.request(LIST)["result"]["tools"]]
        for message in peer.messages():
            if held_from is not None and time.monotonic() - held_from > args.hold:
                break
            if not is_ping(message):
                continue
            pings.append(message["id"])
            if args.answer == "error":
                peer.send(answer(message, args.say.replace("{session}", peer.session_id)))
            if len(pings) >= args.pings and held_from is None:
                held_from = time.monotonic()
                if args.hold <= 0:
                    break
    finally:
        peer.close()
    print(json.dumps({"pings": pings, "tools": tools, "session_id": peer.session_id}), flush=True)


if __name__ == "__main__":
    main()
