"""POST requests built from a template: what httpx2 merges into every request, merged once.

`AsyncClient.build_request` merges the client's URL, headers and cookies into each request:
it parses the URL and normalizes every header again, every time. A connection POSTs to one
URL with the same headers until the session id, the protocol version, the credential or
the endpoint changes, so the request is built with `build_request` itself once per change,
and each POST copies its headers and sets its own body and `Content-Length`. The request
then goes through `AsyncClient.send` as before (redirects, hooks, cookies, the pool). While
the client's jar holds cookies (a server set some), every POST is built in full, so each
carries the jar as it is at that moment.
"""

from __future__ import annotations

import httpx2


class PostRequests:
    """Builds the POSTs of one client."""

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self._client = client
        self._key: tuple[str, ...] = ()
        self._template: httpx2.Request | None = None

    def build(self, url: str, headers: dict[str, str], body: bytes) -> httpx2.Request:
        """A POST of `body` to `url` with `headers` (and the client's own), as `build_request` makes it."""
        client = self._client
        if client.cookies:
            return client.build_request("POST", url, content=body, headers=headers)
        key = (url, *(part for item in headers.items() for part in item))
        template = self._template
        if template is None or key != self._key:
            template = self._template = client.build_request("POST", url, headers=headers)
            self._key = key
        request_headers = template.headers.copy()
        request_headers["Content-Length"] = str(len(body))
        request = httpx2.Request(
            "POST", template.url, headers=request_headers, stream=httpx2.ByteStream(body), extensions=template.extensions
        )
        request.read()  # as `content=` would: the body stays readable (redirects, hooks)
        return request
