"""`transports.http_probe`: the doctor's one-off exchanges come back as plain data, a body read
only as far as its limit (an event stream to its first event with data), a redirect reported
and not followed, and a failure as one line without the URL's credentials."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.servers import free_port

from mcp_notebook.transports.http_client import HttpSettings
from mcp_notebook.transports.http_probe import HttpProbe, ProbeFailed, origin_of

RELEASE = threading.Event()  # a held event stream ends when the test does


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "Text/Plain; charset=utf-8")
            self.send_header("X-Two", "a")
            self.send_header("X-Two", "b")
            self.send_header("Content-Length", "10000")
            self.end_headers()
            self.wfile.write(b"x" * 10000)
        elif self.path == "/stream":  # a priming event without data, one with data, then held open
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"id: 0\ndata:\n\nevent: endpoint\ndata: /messages\n\n")
            self.wfile.flush()
            RELEASE.wait(60)
        else:
            self.send_response(302)
            self.send_header("Location", "/next")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"gone")


@contextlib.contextmanager
def server() -> Iterator[str]:
    RELEASE.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        RELEASE.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def probe() -> Iterator[HttpProbe]:
    made = HttpProbe(HttpSettings(proxy=""), timeout=10.0)
    yield made
    made.close()


def test_a_body_is_read_to_its_limit_and_headers_keep_every_value(probe: HttpProbe) -> None:
    with server() as base:
        reply = probe.request("GET", f"{base}/big", headers={}, limit=100)
    assert (reply.status, reply.reason, len(reply.body), reply.location) == (200, "OK", 100, None)
    assert reply.headers.get_list("x-two") == ["a", "b"] and reply.headers.get("X-TWO") == "a, b"
    assert reply.content_type == "text/plain" and reply.headers.get("absent") is None


def test_an_event_stream_is_read_to_its_first_event_with_data(probe: HttpProbe) -> None:
    with server() as base:
        reply = probe.request("GET", f"{base}/stream", headers={}, limit=1 << 20, deadline=time.monotonic() + 60)
    assert reply.body == "id: 0\ndata:\n\nevent: endpoint\ndata: /messages\n\n"


def test_a_redirect_is_reported_not_followed_nor_read(probe: HttpProbe) -> None:
    with server() as base:
        reply = probe.request("GET", f"{base}/old", headers={}, limit=100)
    assert (reply.status, reply.location, reply.body) == (302, f"{base}/next", "")
    assert origin_of(reply.location) == origin_of(base) == ("http", "127.0.0.1", int(base.rsplit(":", 1)[1]))


def test_no_answer_is_one_line_without_the_urls_credentials(probe: HttpProbe) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp?token=s3cr3t-probe-value"
    with pytest.raises(ProbeFailed) as failed:
        probe.request("GET", url, headers={})
    assert "cannot connect to http://127.0.0.1:" in str(failed.value) and "s3cr3t" not in str(failed.value)
    assert not failed.value.timed_out and "\n" not in str(failed.value)
