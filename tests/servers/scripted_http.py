"""What the scripted HTTP test servers share: a quiet HTTP/1.1 handler that sends a whole answer
(`ScriptedHandler._send`), and `serve`, on 127.0.0.1 with a thread per connection.

Each server script (raw_http_server, hostile_http_server, listening_server, era_http_server,
late_probe_server) scripts only its own paths: the wire faults real peers cannot produce. They
run as scripts, so this module is imported from beside them.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"


class ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep stderr quiet
        pass

    def _send(self, status: int, body: bytes = b"", content_type: str | None = None, headers: dict | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(handler: type[BaseHTTPRequestHandler], port: int) -> None:
    """Answer on 127.0.0.1:`port` until the process ends."""
    server = ThreadingHTTPServer((HOST, port), handler)
    server.daemon_threads = True
    server.serve_forever()
