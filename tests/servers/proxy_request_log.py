"""A proxy.py plugin for the proxy tests: one line per request the proxy passes on.

proxy.py's own access log has a line per connection (naming its first request), so on
keep-alive connections it cannot tell which requests went through; this plugin's
`handle_client_request` runs for each request, and appends `METHOD HOST:PORT PATH` to the
file named by `PROXY_REQUEST_LOG`.

Usage: python -m proxy ... --plugins proxy_request_log.RequestLog   (this folder on PYTHONPATH)
"""

from __future__ import annotations

import os

from proxy.http.parser import HttpParser
from proxy.http.proxy import HttpProxyBasePlugin


class RequestLog(HttpProxyBasePlugin):
    def handle_client_request(self, request: HttpParser) -> HttpParser | None:
        host = (request.host or b"").decode()
        path = (request.path or b"").decode()
        method = (request.method or b"").decode()
        with open(os.environ["PROXY_REQUEST_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{method} {host}:{request.port} {path}\n")
        return request
