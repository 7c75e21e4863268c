"""A scripted raw Streamable HTTP server for wire faults real peers cannot produce.

On /mcp it answers `initialize` (session id "raw-session"), takes notifications and
responses with 202, has no GET stream (405), and acts out a scenario for each
`tools/call` whose tool name names one:

* `bad-ids`  streams pings with null, bool, float and object ids, then a ping with id
             "good", waits until the client has POSTed its answer to "good", and answers
             with every frame the client POSTed since the scenario began.
* `big-body` answers with a JSON body of `size` bytes (the tool's argument), as fast as
             the client reads; `big-event` answers with an SSE stream of one such event.
* `malformed` answers with a body no decoder should choke on, of the given `shape` (as
             raw_server.py's: nested, id-last, not-utf8, nul).
* `slow-body` announces a large JSON body and trickles it, a byte at a time, until the
             client hangs up (at most two minutes).

On /late the same server opens its GET listening stream only a second after it is asked
for (a slow proxy, a busy server), and its `ping-via-listener` tool sends a `ping` on that
stream, as servers do with requests tied to no POST, or, as the TypeScript SDK does, drops
it when no listening stream is open yet; the tool says which.

On /forgetful each `initialize` starts a new session, and the GET listening stream stays
open while its session is known. The `forget-session` tool answers, then forgets the
session and ends the stream: the server says so only on the GET the client sends to
resume it (404), as no request of the client's is in flight. Requests with an unknown
session get 404 too.

Other paths: /html serves an HTML page; /auth answers 401 with a JSON-RPC error without
an id; /broken answers 500 with a JSON-RPC error without an id; /same redirects every
request (307) to /mcp on the same origin, /moved to /mcp on another origin (the same port,
named `localhost`), as a proxy or a hostile server may. /sticky sets a cookie with its
`initialize` answer (as a load balancer pinning a client to one node does) and answers
any other POST that does not bring it back with 403.

Usage: python raw_http_server.py PORT   (binds 127.0.0.1 only)
"""

from __future__ import annotations

import itertools
import json
import sys
import threading

from raw_server import hostile_reply  # the same hostile replies as over stdio (this folder is on the path)
from scripted_http import ScriptedHandler, serve

posted: list[dict] = []
posted_changed = threading.Condition()
listener: list = []  # the open GET stream's writer, on /late
sessions: set[str] = set()  # the sessions /forgetful knows
session_numbers = itertools.count(1)
LISTENER_DELAY = 1.0
STICKY = "affinity=node-7"  # the cookie /sticky sets


class Handler(ScriptedHandler):
    def _json(self, obj: object, status: int = 200, headers: dict | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _redirected(self) -> bool:
        """/same and /moved: a 307 (method and body kept) to /mcp, here or on another origin."""
        if self.path not in ("/same", "/moved"):
            return False
        if self.command == "POST":
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
        port = self.server.server_address[1]
        target = "/mcp" if self.path == "/same" else f"http://localhost:{port}/mcp"
        self._send(307, headers={"Location": target})
        return True

    def do_GET(self) -> None:
        if self._redirected():
            return
        if self.path == "/html":
            self._send(200, b"<!doctype html><title>Not MCP</title><p>hello</p>", "text/html; charset=utf-8")
        elif self.path == "/late":
            self._listen_late()
        elif self.path == "/forgetful":
            self._listen_while_known(self.headers.get("Mcp-Session-Id"))
        else:
            self._send(405)

    def _listen_late(self) -> None:
        threading.Event().wait(LISTENER_DELAY)  # the fault: the stream opens late
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b": open\n\n")
        self.wfile.flush()
        with posted_changed:
            listener.append(self)
            posted_changed.notify_all()
            posted_changed.wait_for(lambda: self not in listener)  # until the session is deleted
        self.close_connection = True

    def _listen_while_known(self, session: str | None) -> None:
        with posted_changed:
            known = session in sessions
        if not known:
            self._send(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"retry: 100\n\n")  # resume soon after it ends
        self.wfile.flush()
        with posted_changed:
            posted_changed.wait_for(lambda: session not in sessions)
        self.close_connection = True

    def do_DELETE(self) -> None:
        if self._redirected():
            return
        with posted_changed:
            sessions.discard(self.headers.get("Mcp-Session-Id"))
            listener.clear()
            posted_changed.notify_all()
        self._send(200)

    def do_POST(self) -> None:
        if self._redirected():
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        if self._not_mcp():
            return
        session = self.headers.get("Mcp-Session-Id")
        if self._unwelcome(body, session):
            return
        with posted_changed:
            posted.append(body)
            posted_changed.notify_all()
        if "method" not in body:  # a response of the client's
            self._send(202)
            return
        if "id" not in body:  # a notification
            self._send(202)
            return
        if body["method"] == "initialize":
            self._initialize(body)
        elif body["method"] == "ping":
            self._json({"jsonrpc": "2.0", "id": body["id"], "result": {}})
        elif body["method"] == "tools/call":
            self._tool(body, session)
        else:
            self._json({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "Method not found"}})

    def _tool(self, body: dict, session: str | None) -> None:
        name, request_id, arguments = body["params"]["name"], body["id"], body["params"].get("arguments") or {}
        if name == "bad-ids":
            self._bad_ids(request_id)
        elif name == "ping-via-listener":
            self._ping_via_listener(request_id)
        elif name == "forget-session":
            self._forget(request_id, session)
        elif name == "malformed":
            self._send(200, hostile_reply(request_id, arguments["shape"]) or b"", "application/json")
        elif name in ("big-body", "big-event", "slow-body"):
            self._big(name, request_id, arguments)
        else:
            self._json({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    def _unwelcome(self, body: dict, session: str | None) -> bool:
        """/sticky without its cookie (403), /forgetful with a session it forgot (404): True once answered."""
        if body.get("method") == "initialize":
            return False
        if self.path == "/sticky" and STICKY not in self.headers.get("Cookie", ""):
            self._send(403)
        elif self.path == "/forgetful" and session not in sessions:
            self._send(404)
        else:
            return False
        return True

    def _not_mcp(self) -> bool:
        """The paths that answer no MCP at all: True once one has answered."""
        if self.path == "/auth":
            self._json(
                {"jsonrpc": "2.0", "error": {"code": -32001, "message": "missing bearer token"}},
                401,
                {"WWW-Authenticate": 'Bearer realm="raw"'},
            )
        elif self.path == "/broken":
            self._json({"jsonrpc": "2.0", "error": {"code": -32603, "message": "the server fell over"}}, 500)
        elif self.path == "/html":
            self._send(200, b"<!doctype html><p>not here</p>", "text/html")
        else:
            return False
        return True

    def _initialize(self, body: dict) -> None:
        result = {
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-http-test-server", "version": "0"},
        }
        session = "raw-session"
        if self.path == "/forgetful":
            with posted_changed:
                session = f"forgetful-{next(session_numbers)}"
                sessions.add(session)
        headers = {"Mcp-Session-Id": session}
        if self.path == "/sticky":
            headers["Set-Cookie"] = f"{STICKY}; Path=/"
        self._json({"jsonrpc": "2.0", "id": body["id"], "result": result}, headers=headers)

    def _forget(self, request_id: object, session: str | None) -> None:
        """Answer, then forget the session: its GET stream ends, and the next one gets 404."""
        self._json({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "forgotten"}]}})
        with posted_changed:
            sessions.discard(session)
            posted_changed.notify_all()

    def _bad_ids(self, request_id: object) -> None:
        with posted_changed:
            start = len(posted)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for bad in (None, True, 1.5, {"a": 1}):
            self._event({"jsonrpc": "2.0", "id": bad, "method": "ping"})
        self._event({"jsonrpc": "2.0", "id": "good", "method": "ping"})
        with posted_changed:
            posted_changed.wait_for(lambda: any(p.get("id") == "good" for p in posted[start:]), timeout=30)
            replies = posted[start:]
        text = json.dumps(replies)
        self._event({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
        self.close_connection = True

    def _ping_via_listener(self, request_id: object) -> None:
        with posted_changed:
            stream = listener[0] if listener else None
        if stream is None:
            outcome = "dropped: no listening stream was open"
        else:
            stream._event({"jsonrpc": "2.0", "id": "via-get", "method": "ping"})
            with posted_changed:
                answered = posted_changed.wait_for(lambda: any(p.get("id") == "via-get" for p in posted), timeout=30)
            outcome = "answered" if answered else "sent, never answered"
        self._json({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": outcome}]}})

    def _big(self, name: str, request_id: object, arguments: dict) -> None:
        """A result whose text fills the message to `size` bytes, sent whole, as one SSE event, or slowly."""
        size = int(arguments.get("size", 1 << 30))
        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": ""}]}})
        before, _, after = head.partition('""')
        prefix, suffix = (before + '"').encode(), ('"' + after).encode()
        if name == "big-event":
            prefix, suffix = b"data: " + prefix, suffix + b"\n\n"
        fill = max(0, size - len(prefix) - len(suffix))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if name == "big-event" else "application/json")
        self.send_header("Content-Length", str(len(prefix) + fill + len(suffix)))
        self.end_headers()
        try:
            self.wfile.write(prefix)
            if name == "slow-body":
                for _ in range(1200):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    threading.Event().wait(0.1)  # the fault: a body that takes forever
                return
            chunk = b"x" * (1 << 20)
            while fill > 0:
                self.wfile.write(chunk[: min(fill, len(chunk))])
                fill -= len(chunk)
            self.wfile.write(suffix)
        except OSError:
            pass  # the client hung up: what a bounded reader does
        finally:
            self.close_connection = True

    def _event(self, message: object) -> None:
        self.wfile.write(f"data: {json.dumps(message)}\n\n".encode())
        self.wfile.flush()


def main() -> None:
    serve(Handler, int(sys.argv[1]))


if __name__ == "__main__":
    main()
