"""A scripted modern-only (2026-07-28) server whose answer to the era probe comes late: what a
real modern server does only under load, which no test can arrange on demand.

It holds its DiscoverResult to `server/discover` until released, and refuses `initialize` as a
modern-only server does: over stdio with a JSON-RPC error -32601, over HTTP with 400 and a
JSON-RPC error naming the versions it takes (2026-07-28, basic/versioning). Once released it
answers modern `tools/list` (one tool, `echo`) and `tools/call` (`echo` says its `text`).

Released by `--release initialize`: right after it has refused `initialize`; or by
`--release PATH`: once a byte is written to the FIFO at PATH (a test writes it when the
client has seen the refusal, so the answer comes after it for sure); `--release now`: never
held. `--ttl-ms N` puts N (an integer of any size) in the DiscoverResult as its `ttlMs`.

With `--sse` (HTTP) it is instead a legacy server of the HTTP+SSE transport (2024-11-05) whose
answer to the probe is as late: any POST to /mcp gets 405 (the probe's held until released),
GET /mcp opens the event stream naming /message as the endpoint, and what is POSTed there
(`initialize`, `tools/list`) is answered on that stream.

Usage: python late_probe_server.py stdio --release R
       python late_probe_server.py http PORT --release R   (binds 127.0.0.1 only)
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
VERSION = "2026-07-28"
INFO = {"name": "late-probe-server", "version": "1.0"}
ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
released = threading.Event()
release_on_initialize = False
ttl_ms: int | None = None
legacy_sse = False
stream: queue.Queue[dict[str, Any]] = queue.Queue()  # what the HTTP+SSE stream has yet to send


def discovered() -> dict[str, Any]:
    result: dict[str, Any] = {
        "resultType": "complete",
        "supportedVersions": [VERSION],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
    }
    if ttl_ms is not None:
        result["ttlMs"] = ttl_ms
    return result


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to a modern request (after the release), or to initialize (a refusal)."""
    method, request_id = request.get("method"), request.get("id")
    if method == "server/discover":
        released.wait()
        return {"jsonrpc": "2.0", "id": request_id, "result": discovered()}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "tools": [ECHO]}}
    if method == "tools/call":
        text = (request.get("params") or {}).get("arguments", {}).get("text", "")
        content = [{"type": "text", "text": text}]
        return {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "content": content}}
    error = {"code": -32601, "message": f"Method not found: {method} (this server speaks {VERSION} only)"}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def refused(request: dict[str, Any]) -> None:
    """After an answer is written: an initialize refusal may release the held probe answer."""
    if request.get("method") == "initialize" and release_on_initialize:
        released.set()


def serve_stdio() -> None:
    lock = threading.Lock()

    def write(message: dict[str, Any]) -> None:
        with lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def held(request: dict[str, Any]) -> None:
        write(answer(request))

    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request or "method" not in request:
            continue  # a notification
        if request["method"] == "server/discover":
            threading.Thread(target=held, args=(request,), daemon=True).start()
            continue
        write(answer(request))
        refused(request)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if not legacy_sse:
            return self._send(405, b"")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"event: endpoint\ndata: /message\n\n")
        self.wfile.flush()
        while True:  # until the client hangs up (the write fails) or the server is stopped
            self.wfile.write(f"event: message\ndata: {json.dumps(stream.get())}\n\n".encode())
            self.wfile.flush()

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        if legacy_sse:
            return self._legacy_sse(request)
        if "id" not in request or "method" not in request:
            return self._send(202, b"")
        reply = answer(request)
        if request["method"] == "initialize":
            message = f"Bad Request: initialize is not a {VERSION} request"
            reply = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32600, "message": message, "data": {"supported": [VERSION]}},
            }
        self._send(400 if "error" in reply else 200, json.dumps(reply).encode(), "application/json")
        refused(request)

    def _legacy_sse(self, request: dict[str, Any]) -> None:
        if self.path.startswith("/message"):
            self._send(202, b"")
            if request.get("method") == "initialize":
                result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": INFO}
                stream.put({"jsonrpc": "2.0", "id": request["id"], "result": result})
            elif request.get("method") == "tools/list":
                stream.put({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": [ECHO]}})
            return None
        if request.get("method") == "server/discover":
            released.wait()
        self._send(405, b"")
        refused(request)
        return None

    def _send(self, status: int, body: bytes, content_type: str | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


def serve_http(port: int) -> None:
    server = ThreadingHTTPServer((HOST, port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def release_from(path: str) -> None:
    """Opened before anything is answered (read-write, so it never reads an end), so a writer
    always finds a reader; released by the first byte written."""
    fd = os.open(path, os.O_RDWR)
    threading.Thread(target=lambda: os.read(fd, 1) and released.set(), daemon=True).start()


def main() -> None:
    global release_on_initialize, ttl_ms, legacy_sse
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=("stdio", "http"))
    parser.add_argument("port", type=int, nargs="?")
    parser.add_argument("--release", required=True)
    parser.add_argument("--ttl-ms", type=int)
    parser.add_argument("--sse", action="store_true")
    args = parser.parse_args()
    ttl_ms, legacy_sse = args.ttl_ms, args.sse
    if args.release == "now":
        released.set()
    elif args.release == "initialize":
        release_on_initialize = True
    else:
        release_from(args.release)
    if args.transport == "stdio":
        serve_stdio()
    else:
        serve_http(args.port)


if __name__ == "__main__":
    main()
