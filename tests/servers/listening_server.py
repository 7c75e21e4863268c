"""A scripted Streamable HTTP server whose GET listening stream misbehaves, for what real peers cannot do.

On every path it answers `initialize` (session id "listening-session"), takes notifications
and responses with 202, answers `ping`, and its `gets` tool says how many GETs it has seen.
The GET listening stream acts out the path:

* `/flap`          each GET gets a stream that says `retry: 0` and ends at once.
* `/refuse-once`   the first GET's stream stays open until the `drop` tool ends it; the next
                   GET is refused (503); the one after gets a stream that carries a
                   `notifications/message` ("after the reopen") and stays open.
* `/forget`        every `initialize` gets a new session id; the first GET of each session
                   gets a stream that says `retry: 0` and ends at once, and the next GET a
                   404, as for a session the server forgot; POSTs are served as usual. The
                   `initializes` tool says how many `initialize` requests it has seen.
* `/flood`         the stream sends `count` (the query, default 100000) small notifications as
                   fast as the client reads them, then a `ping` with id "after-flood"; the
                   `flood-answered` tool says how many went out, once the client answered
                   the ping (or after 30 s).
* `/mute`          every GET is read and never answered: no status line, the connection held
                   open until the client hangs up or the server ends.

Usage: python listening_server.py PORT   (binds 127.0.0.1 only)
"""

from __future__ import annotations

import json
import sys
import threading
from urllib.parse import parse_qs, urlsplit

from scripted_http import ScriptedHandler, serve

SESSION = "listening-session"
changed = threading.Condition()
gets = 0
initializes = 0
streamed: set[str | None] = set()  # /forget: the sessions whose stream was opened once
sent = 0
dropped = threading.Event()
closed = threading.Event()
pong = threading.Event()  # the client answered the ping after the flood


class Handler(ScriptedHandler):
    def _json(self, obj: object, headers: dict | None = None) -> None:
        self._send(200, json.dumps(obj).encode(), "application/json", headers)

    def _result(self, request_id: object, text: str) -> None:
        self._json({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})

    def _open_stream(self, head: bytes = b"") -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(head or b": open\n\n")
        self.wfile.flush()

    def _event(self, message: object) -> None:
        self.wfile.write(f"data: {json.dumps(message)}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        global gets
        with changed:
            gets += 1
            number = gets
            changed.notify_all()
        path = urlsplit(self.path).path
        try:
            if path == "/flap":
                self._open_stream(b"retry: 0\n\n")
            elif path == "/refuse-once":
                self._refuse_once(number)
            elif path == "/flood":
                self._flood()
            elif path == "/forget":
                self._forget(self.headers.get("Mcp-Session-Id"))
            elif path == "/mute":
                closed.wait()  # the request is read; no answer ever starts
            else:
                self._send(405)
        except OSError:
            pass  # the client hung up
        self.close_connection = True

    def _forget(self, session: str | None) -> None:
        with changed:
            first = session not in streamed
            streamed.add(session)
        if first:
            self._open_stream(b"retry: 0\n\n")
        else:
            self._send(404, b"no such session", "text/plain")

    def _refuse_once(self, number: int) -> None:
        if number == 2:
            self._send(503, b"busy", "text/plain")
            return
        self._open_stream()
        if number > 2:
            note = {"level": "info", "data": "after the reopen"}
            self._event({"jsonrpc": "2.0", "method": "notifications/message", "params": note})
        (dropped if number == 1 else closed).wait()

    def _flood(self) -> None:
        global sent
        count = int(parse_qs(urlsplit(self.path).query).get("count", ["100000"])[0])
        self._open_stream()
        for number in range(count):
            self.wfile.write(
                b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"f","progress":%d}}\n\n'
                % number
            )
            with changed:
                sent = number + 1
        self._event({"jsonrpc": "2.0", "id": "after-flood", "method": "ping"})
        closed.wait()

    def do_DELETE(self) -> None:
        closed.set()
        self._send(200)

    def do_POST(self) -> None:
        global initializes
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        if "method" not in body or "id" not in body:  # a response or a notification of the client's
            if body.get("id") == "after-flood" and "result" in body:
                pong.set()
            self._send(202)
            return
        method, request_id = body["method"], body["id"]
        if method == "initialize":
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "listening-test-server", "version": "0"},
            }
            with changed:
                initializes += 1
                session = SESSION if urlsplit(self.path).path != "/forget" else f"{SESSION}-{initializes}"
            self._json({"jsonrpc": "2.0", "id": request_id, "result": result}, {"Mcp-Session-Id": session})
        elif method == "ping":
            self._json({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/call" and body["params"]["name"] == "gets":
            with changed:
                self._result(request_id, str(gets))
        elif method == "tools/call" and body["params"]["name"] == "initializes":
            with changed:
                self._result(request_id, str(initializes))
        elif method == "tools/call" and body["params"]["name"] == "drop":
            dropped.set()
            self._result(request_id, "dropped")
        elif method == "tools/call" and body["params"]["name"] == "flood-answered":
            answered = pong.wait(30)
            with changed:
                self._result(request_id, f"{sent} sent, " + ("ping answered" if answered else "ping never answered"))
        else:
            self._json({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    serve(Handler, int(sys.argv[1]))


if __name__ == "__main__":
    main()
