"""A scripted legacy Streamable HTTP server whose answer to the era probe (`server/discover`) is
a fault that real peers produce only in part, and whose session ids may be malformed.

Every path serves a plain stateful legacy server: `initialize` opens a session (id `s-N`), a
notification or response gets 202, GET gets 405, `ping` and `tools/list` (one tool, `echo`)
answer, a request with a session id it does not know gets 404. What the probe gets, by path:

* `/probe-500`     HTTP 500, text/plain (a proxy or gateway that fell over on an unknown method)
* `/probe-html`    HTTP 200 with an HTML page (a front door that serves a web page to anything)
* `/probe-rpc`     HTTP 200 with a JSON-RPC error -32601 (method not found)
* `/probe-dead`    HTTP 400 with a JSON-RPC error, an `Mcp-Session-Id` of a session it has
                   already ended (as FastMCP 1.x does) and a cookie; an `initialize` that brings
                   either back is refused (404 for the dead id, 400 for the cookie), as the
                   probe's leftovers are no session of the client's
* `/id-space`, `/id-control`, `/id-utf8`: the probe gets 400; `initialize` answers with a session
                   id holding a space, a control byte, or UTF-8 (é): bytes the spec forbids
* `/forgot`        everything as above, and the probe gets 400, but the first `initialize` that
                   carries a session id (one left over from before) gets 404
* `/get-other`     the GET listening stream is refused (405) with an `Mcp-Session-Id` of another
                   session: only the answer to initialize sets one
* `/versions-retry`  the first probe gets -32022 (HTTP 400) naming 2026-07-28, the very version
                   asked for (as the conformance suite's request-metadata scenario does); later
                   ones a DiscoverResult, and modern `tools/list` requests are answered
* `/versions-future` -32022 naming only 2027-01-01; `/versions-legacy` -32022 naming only
                   handshake-era versions (2025-11-25, 2025-06-18)

Usage: python era_http_server.py PORT   (binds 127.0.0.1 only)
"""

from __future__ import annotations

import itertools
import json
import sys
import threading

from scripted_http import ScriptedHandler, serve

DEAD = "dead-session-0001"
PROBE_COOKIE = "probe=left-over"
BAD_IDS = {"/id-space": b"bad id", "/id-control": b"bad\x01id", "/id-utf8": "caf\u00e9".encode()}
sessions: set[str] = set()
numbers = itertools.count(1)
lock = threading.Lock()
refused: set[str] = set()  # the paths whose first probe was refused already
SUPPORTED = {
    "/versions-retry": ["2026-07-28"],
    "/versions-future": ["2027-01-01"],
    "/versions-legacy": ["2025-11-25", "2025-06-18"],
}


class Handler(ScriptedHandler):
    def _send(self, status: int, body: bytes = b"", content_type: str | None = None, raw_headers: list[bytes] = ()) -> None:
        """Written by hand, so a header may hold bytes `send_header` would refuse."""
        lines = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}".encode()]
        if content_type:
            lines.append(f"Content-Type: {content_type}".encode())
        lines += list(raw_headers)
        lines.append(f"Content-Length: {len(body)}".encode())
        self.wfile.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        self.wfile.flush()

    def _json(self, obj: object, status: int = 200, raw_headers: list[bytes] = ()) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", raw_headers)

    def _error(self, request_id: object, code: int, message: str, status: int = 200, **more: object) -> None:
        self._json({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, **more}}, status)

    def do_GET(self) -> None:
        self._send(405, raw_headers=[b"Mcp-Session-Id: other-session"] if self.path == "/get-other" else [])

    def do_DELETE(self) -> None:
        with lock:
            sessions.discard(self.headers.get("Mcp-Session-Id", ""))
        self._send(200)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        method, request_id = body.get("method"), body.get("id")
        if method == "server/discover":
            return self._probe(request_id)
        session = self.headers.get("Mcp-Session-Id")
        if self.path == "/versions-retry" and method == "tools/list":
            return self._json({"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "tools": []}})
        if method == "initialize":
            return self._initialize(request_id, session)
        with lock:
            known = session in sessions
        if not known:
            return self._error(request_id, -32001, "no session", 404)
        if request_id is None or method is None:
            return self._send(202)
        if method == "tools/list":
            tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
            return self._json({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [tool]}})
        if method == "ping":
            return self._json({"jsonrpc": "2.0", "id": request_id, "result": {}})
        self._error(request_id, -32601, "Method not found")

    def _probe(self, request_id: object) -> None:
        with lock:
            first = self.path not in refused
            refused.add(self.path)
        if self.path in SUPPORTED and (first or self.path != "/versions-retry"):
            data = {"supported": SUPPORTED[self.path], "requested": self.headers.get("MCP-Protocol-Version")}
            return self._error(request_id, -32022, "Unsupported protocol version", 400, data=data)
        if self.path == "/versions-retry":
            result = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "era-http-server", "version": "1.0"}}
            return self._json({"jsonrpc": "2.0", "id": request_id, "result": result})
        if self.path == "/probe-500":
            self._send(500, b"Internal Server Error", "text/plain")
        elif self.path == "/probe-html":
            self._send(200, b"<!doctype html><title>Welcome</title><p>hello</p>", "text/html; charset=utf-8")
        elif self.path == "/probe-rpc":
            self._error(request_id, -32601, "Method not found")
        else:
            error = {"code": -32600, "message": "Bad Request: Missing session ID"}
            error = {"jsonrpc": "2.0", "id": "server-error", "error": error}  # FastMCP 1.x's words, and its id
            left = [f"Mcp-Session-Id: {DEAD}".encode(), f"Set-Cookie: {PROBE_COOKIE}; Path=/".encode()]
            self._json(error, 400, left if self.path == "/probe-dead" else [])

    def _initialize(self, request_id: object, session: str | None) -> None:
        if session is not None and (session == DEAD or self.path == "/forgot"):
            return self._error(request_id, -32001, "Session not found", 404)
        if PROBE_COOKIE in self.headers.get("Cookie", ""):
            return self._error(request_id, -32600, "stale cookie", 400)
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "era-http-server", "version": "1.0"},
        }
        new = f"s-{next(numbers)}"
        with lock:
            sessions.add(new)
        session_id = BAD_IDS.get(self.path, new.encode())
        self._json({"jsonrpc": "2.0", "id": request_id, "result": result}, raw_headers=[b"Mcp-Session-Id: " + session_id])


def main() -> None:
    serve(Handler, int(sys.argv[1]))


if __name__ == "__main__":
    main()
