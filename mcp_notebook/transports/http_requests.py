"""The POSTs of an HTTP transport: built from a template, sent past the client's unused layers.

Building: `AsyncClient.build_request` merges the client's URL, headers and cookies into each
request: it parses the URL and normalizes every header again, every time. A connection POSTs
to one URL with the same headers until the session id, the protocol version, the credential
or the endpoint changes, so the request is built with `build_request` itself once per change,
and each POST copies its headers and sets its own body and `Content-Length`.

Sending: `AsyncClient.send` runs each request through an auth flow (an async generator; we
configure no httpx2 auth, OAuth is the transport's `AuthHook`), a redirect loop, its response
hooks and the cookie jar. While none of that has anything to do, a POST goes straight to the
client's transport (the same pool, TLS and socket options). Whatever would need the client
sends through `AsyncClient.send` in full: a jar holding cookies (each request then carries the
jar as it is), a URL with credentials in it (httpx2 turns them into Basic auth), and every
POST after a redirect: the redirect answer is closed unread and the POST sent again through
the client, which follows it (or refuses it: `refuse_cross_origin_redirects`).
"""

from __future__ import annotations

import logging

import httpx2

_log = logging.getLogger("httpx2")  # the client logs each exchange there; so do we, for those we send


class PostRequests:
    """Builds and sends the POSTs of one client."""

    def __init__(self, client: httpx2.AsyncClient, transport: httpx2.AsyncBaseTransport) -> None:
        self._client = client
        self._transport = transport  # the one the client was given: it has no other mounts
        self._key: tuple[str, ...] = ()
        self._template: httpx2.Request | None = None
        self._direct = True  # no redirect met yet

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
        request = httpx2.Request(
            "POST", template.url, headers=template.headers, stream=httpx2.ByteStream(body), extensions=template.extensions
        )
        request.headers["Content-Length"] = str(len(body))
        request.read()  # as `content=` would: the body stays readable (redirects, hooks)
        return request

    async def send(self, request: httpx2.Request) -> httpx2.Response:
        """Send a POST and return its response with the body unread (the caller closes it)."""
        client = self._client
        if not self._direct or client.cookies or request.url.userinfo:
            return await client.send(request, stream=True)
        try:
            response = await self._transport.handle_async_request(request)
        except httpx2.RequestError as exc:
            exc.request = request  # as the client does: errors name their request
            raise
        response.request = request
        if response.has_redirect_location:
            await response.aclose()
            self._direct = False  # the endpoint moves: the client follows, from now on
            return await client.send(request, stream=True)
        if "set-cookie" in response.headers or "set-cookie2" in response.headers:
            client.cookies.extract_cookies(response)
        if _log.isEnabledFor(logging.INFO):
            _log.info(
                'HTTP Request: %s %s "%s %d %s"',
                "POST",
                request.url,
                response.http_version,
                response.status_code,
                response.reason_phrase,
            )
        return response
