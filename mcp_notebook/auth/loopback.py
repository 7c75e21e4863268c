"""A one-shot HTTP listener on the loopback address for the authorization response: where the
browser and the client share a machine, the browser's redirect to `redirect_uri` completes
the flow without anyone pasting a URL (RFC 8252 section 7.3).

It listens only on 127.0.0.1 (or ::1), answers the first request on the redirect path with a
page saying the tab may be closed, and stops. Its thread is joined on close.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
PAGE = b"<!doctype html><title>Authorized</title><p>Authorization is complete: you may close this tab.</p>"


class Receiver(Protocol):
    """What waits for the browser's redirect (this listener, or the Jupyter server's hand-off):
    `received` once `arrived` is set."""

    received: str | None
    arrived: threading.Event

    def wait(self, timeout: float | None = None) -> str | None: ...

    def close(self) -> None: ...


class LoopbackReceiver:
    """Receives one redirect to `redirect_uri` (an http URL on a loopback host, with a port)."""

    def __init__(self, redirect_uri: str) -> None:
        parts = urlsplit(redirect_uri)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS or not parts.port:
            raise ValueError(f"{redirect_uri} is not an http URL on a loopback address with a port")
        self.path = parts.path or "/"
        self.received: str | None = None
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the http.server protocol names it
                if urlsplit(self.path).path != receiver.path or receiver.arrived.is_set():
                    self.send_error(404)
                    return
                receiver.received = f"{redirect_uri.split('?')[0]}?{urlsplit(self.path).query}"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)
                receiver.arrived.set()

            def log_message(self, format: str, *args: Any) -> None:  # silent: nothing on stderr
                return

        host = "::1" if parts.hostname == "::1" else "127.0.0.1"
        family = socket.AF_INET6 if host == "::1" else socket.AF_INET
        server_class = type("LoopbackServer", (HTTPServer,), {"address_family": family})
        self._server = server_class((host, parts.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="mcp-oauth-loopback", daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> str | None:
        """The URL the browser was sent back to, once it came (None if not within `timeout`)."""
        self.arrived.wait(timeout)
        return self.received

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._server.shutdown()
            self._server.server_close()
        self._thread.join()

    def __enter__(self) -> LoopbackReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def has_display() -> bool:
    """Whether a browser could open here: never try from a kernel on a headless machine."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def wait_for_redirect(
    receiver: Receiver | None, *, paste: bool, limit: float, stop: Callable[[], bool] = lambda: False
) -> str | None:
    """The URL the browser ended on: from the loopback listener, or pasted on the terminal
    (`paste`), whichever comes first; None after `limit` seconds or once `stop()` says the
    flow was given up (the terminal is then left alone)."""
    if paste and sys.platform == "win32":  # no select() on a console: the listener alone, else the prompt
        paste = receiver is None
        if paste:
            return input("URL: ")
    if paste:
        print("URL (or wait for the browser): " if receiver else "URL: ", end="", flush=True)  # noqa: T201 - the terminal asks
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not stop():
        if receiver is not None and receiver.arrived.wait(0 if paste else 0.25):
            if paste:
                print()  # noqa: T201 - end the prompt's line
            return receiver.received
        if paste:
            readable, _, _ = select.select([sys.stdin], [], [], 0.25)
            if readable:
                return sys.stdin.readline().strip()
    return None
