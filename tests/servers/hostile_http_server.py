"""A scripted hostile HTTP server: faults in answers, streams and URLs real peers cannot produce.

Every path answers `initialize` (session "hostile-session"), `ping`, and notifications and
responses with 202; GET has no listening stream (405) unless a scenario below says otherwise.

* `/elsewhere` is an HTTP+SSE (2024-11-05) server: POST answers 405, GET opens its stream
  with an `endpoint` event naming `/inbox` on another origin (the same port, as
  `localhost`). Whatever reaches `/inbox` is kept, with its headers; `GET /seen`
  (on 127.0.0.1) lists them as JSON.
* `/hop` answers POSTs as `/mcp` does, and redirects (307) its GET listening stream and its
  DELETE to `/inbox` on another origin.
* `/trickle` (GET or POST) answers JSON a byte every 50 ms, for as long as the client reads: an
  authorization server's metadata or token answer that never ends.
* `/stall` announces a body for every 202 it gives (a notification's, a pong's) and never
  sends it.
* Tools (`tools/call` by name), on every path:
  `server-pings` streams two pings, each after the client's answer to the one before, then
  its result, "2 pongs"; `stall` announces a JSON body, sends its first bytes and no more;
  `mislabelled` answers with SSE lines labelled `application/json`, and keeps the stream open;
  `bad-id` (argument `id`: "huge", a 4 MB id, or "escape", one with a terminal escape) sends a
  priming event with the id "e1", then a notification with the bad id, then ends the stream
  before its response; the GET that resumes it gets the response, saying which
  `Last-Event-ID` (its length, if long) brought it back.

A stalled answer waits until the server process ends. Usage: python hostile_http_server.py PORT
(binds 127.0.0.1 only).
"""

from __future__ import annotations

import json
import sys
import threading

from scripted_http import ScriptedHandler, serve

NEVER = threading.Event()  # what a stalled answer waits for
posted: list[dict] = []
changed = threading.Condition()
collected: list[dict] = []  # what reached /inbox: method, path, headers
awaiting: list[object] = []  # the id of the bad-id call whose stream was cut, for the GET that resumes it
BAD_IDS = {"huge": "x" * (4 << 20), "escape": "e2\x1b]52;c;aGk=\x07"}


class Handler(ScriptedHandler):
    def _json(self, obj: object, headers: dict | None = None) -> None:
        self._send(200, json.dumps(obj).encode(), "application/json", headers)

    def _open_stream(self, content_type: str = "text/event-stream") -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, message: object, event_id: str | None = None) -> None:
        head = f"id: {event_id}\n" if event_id is not None else ""
        self.wfile.write(f"{head}data: {json.dumps(message) if message is not None else ''}\n\n".encode())
        self.wfile.flush()

    def _collect(self) -> bool:
        if not self.path.startswith("/inbox"):
            return False
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with changed:
            collected.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items())})
        self._send(202)
        return True

    def _hop(self) -> bool:
        if self.path != "/hop":
            return False
        self._send(307, headers={"Location": f"http://localhost:{self.server.server_address[1]}/inbox"})
        return True

    def do_GET(self) -> None:
        if self._collect() or self._hop():
            return
        if self.path == "/trickle":
            self._trickle()
        elif self.path == "/seen":
            with changed:
                self._json(collected)
        elif self.path == "/elsewhere":
            port = self.server.server_address[1]
            self._open_stream()
            self.wfile.write(f"event: endpoint\ndata: http://localhost:{port}/inbox?sessionId=1\n\n".encode())
            self.wfile.flush()
            NEVER.wait()
        elif self.headers.get("Last-Event-ID") is not None:
            self._resume(self.headers["Last-Event-ID"])
        else:
            self._send(405)

    def do_DELETE(self) -> None:
        if not (self._collect() or self._hop()):
            self._send(200)

    def do_POST(self) -> None:
        if self._collect():
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/trickle":
            self._trickle()
            return
        if self.path == "/elsewhere":
            self._send(405)
            return
        body = json.loads(raw or b"null")
        with changed:
            posted.append(body)
            changed.notify_all()
        if "method" not in body or "id" not in body:  # a response or a notification of the client's
            if self.path == "/stall":
                self.send_response(202)
                self.send_header("Content-Length", "16")  # the fault: the body never comes
                self.end_headers()
                self.wfile.flush()
                NEVER.wait()
            self._send(202)
        elif body["method"] == "initialize":
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile-http-test-server", "version": "0"},
            }
            self._json({"jsonrpc": "2.0", "id": body["id"], "result": result}, {"Mcp-Session-Id": "hostile-session"})
        elif body["method"] == "ping":
            self._json({"jsonrpc": "2.0", "id": body["id"], "result": {}})
        elif body["method"] == "tools/call":
            self._tool(body["params"]["name"], body["id"], body["params"].get("arguments") or {})
        else:
            self._json({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "Method not found"}})

    def _trickle(self) -> None:
        self._open_stream(content_type="application/json")
        try:
            self.wfile.write(b'{"issuer": "')
            while True:
                self.wfile.write(b"x")
                self.wfile.flush()
                threading.Event().wait(0.05)  # the fault: an answer that never ends
        except OSError:
            pass  # the client gave up

    def _tool(self, name: str, request_id: object, arguments: dict) -> None:
        if name == "server-pings":
            self._open_stream()
            for n in (1, 2):
                self._event({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"})
                with changed:
                    changed.wait_for(lambda n=n: any(p.get("id") == f"p{n}" and "method" not in p for p in posted))
            self._event(_result(request_id, "2 pongs"))
        elif name == "stall":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b'{"jsonrpc": "2.0", ')  # the fault: the rest never comes
            self.wfile.flush()
            NEVER.wait()
        elif name == "mislabelled":
            self._open_stream(content_type="application/json")
            self._event(_result(request_id, "as SSE"))
            NEVER.wait()  # a stream stays open
        elif name == "bad-id":
            with changed:
                awaiting.append(request_id)
            self._open_stream()
            self._event(None, "e1")  # a priming event: an id, no message
            self._event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}},
                        BAD_IDS[arguments["id"]])  # fmt: skip
        else:
            self._json({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    def _resume(self, last_event_id: str) -> None:
        with changed:
            request_id = awaiting.pop() if awaiting else None
        if request_id is None:
            self._send(404)
            return
        said = last_event_id if len(last_event_id) < 100 else f"{len(last_event_id)} characters"
        self._open_stream()
        self._event(_result(request_id, f"resumed after {said}"))


def _result(request_id: object, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def main() -> None:
    serve(Handler, int(sys.argv[1]))


if __name__ == "__main__":
    main()
