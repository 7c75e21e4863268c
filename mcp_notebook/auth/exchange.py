"""The OAuth client's own HTTP exchanges (metadata, registration, tokens), each traced as an
HTTP-level event with its step; no request or response body is ever traced.

It is its own HTTP client, apart from the transport's: none of the MCP request headers (API
keys, the session id, the access token) go to the authorization server, and redirects are
not followed. It is built on the same `HttpSettings` as the transport's (proxy, trusted roots).
Each exchange is over within its `timeout`, however slowly the server sends, and reads at most
`MAX_BODY` of the answer (these endpoints are named by the server: any of them may be hostile).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2

from ..base.errors import AuthorizationError
from ..base.text import plain
from ..transports.http_bodies import read_head
from ..transports.http_client import HttpSettings, async_client
from ..transports.http_errors import describe_failure, redact_url

Events = Callable[..., Any]
MAX_BODY = 1024 * 1024
MIN_SECRET = 4  # shorter strings are not worth redacting (and the Redactor refuses them)


@dataclass(frozen=True)
class Answer:
    """What an endpoint answered: its status, its JSON object (None if not one; a token endpoint's
    holds the tokens, so it stays out of the repr), the `DPoP-Nonce` headers."""

    status: int
    data: dict[str, Any] | None = field(repr=False)
    nonces: tuple[str, ...] = ()


class AuthExchange:
    """GET and POST to authorization and metadata endpoints, traced, answering JSON."""

    def __init__(
        self, events: Events, secret: Callable[[str], None], timeout: float = 30.0, settings: HttpSettings | None = None
    ) -> None:
        self._events = events
        self._secret = secret
        self._timeout = timeout
        self._settings = settings or HttpSettings()
        self._client: httpx2.AsyncClient | None = None

    @property
    def client(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = async_client(self._settings, timeout=self._timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def secret(self, *values: object) -> None:
        """Register credentials as they are learnt, so no trace, error or output shows them."""
        for value in values:
            if isinstance(value, str) and len(value) >= MIN_SECRET:
                self._secret(value)

    def step(self, step: str, note: str, **detail: Any) -> None:
        """Trace one step of the flow (what was found or decided), never a secret."""
        self._events("auth", note, step=step, **detail)

    async def get_json(self, step: str, url: str, headers: Mapping[str, str] | None = None) -> dict[str, Any] | None:
        """The JSON object at `url`, or None when it is not there (an HTTP error, not JSON)."""
        answer = await self._send(step, "GET", url, headers=headers)
        return answer.data if answer.status == 200 else None

    async def post(
        self,
        step: str,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, dict[str, Any] | None]:
        """POST a form or a JSON body: the status and the JSON object answered (None if not one)."""
        answer = await self._send(step, "POST", url, form=form, body=body, headers=headers)
        return answer.status, answer.data

    async def post_form(self, step: str, url: str, form: Mapping[str, str], headers: Mapping[str, str]) -> Answer:
        """POST a form; the whole answer, with the nonces a DPoP server gives."""
        return await self._send(step, "POST", url, form=form, headers=headers)

    async def _send(
        self,
        step: str,
        method: str,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        started = time.perf_counter()
        all_headers = {"Accept": "application/json", **(headers or {})}
        client = self.client
        request = client.build_request(method, url, headers=all_headers, data=dict(form) if form is not None else None, json=body)
        try:
            with anyio.fail_after(self._timeout):
                response = await client.send(request, stream=True)
                try:
                    content = await read_head(response, MAX_BODY + 1)
                finally:
                    await response.aclose()
        except (httpx2.HTTPError, TimeoutError) as exc:
            why = (
                describe_failure(exc, redact_url(url))
                if isinstance(exc, httpx2.HTTPError)
                else f"{redact_url(url)} did not answer within {self._timeout:g} s"
            )
            self._events("auth-http", why, step=step, method=method, url=redact_url(url))
            if step in ("resource metadata", "server metadata"):
                return Answer(0, None)  # a metadata location that cannot be reached is one that is not there
            raise AuthorizationError(f"{step}: {why}") from None
        self._events(
            "auth-http",
            None,
            step=step,
            method=method,
            url=redact_url(url),
            status=response.status_code,
            seconds=round(time.perf_counter() - started, 6),
        )
        try:
            data = json.loads(content) if content and len(content) <= MAX_BODY else None
        except ValueError:
            data = None
        nonces = tuple(response.headers.get_list("dpop-nonce"))
        return Answer(response.status_code, data if isinstance(data, dict) else None, nonces)


def oauth_error(step: str, status: int, data: dict[str, Any] | None) -> AuthorizationError:
    """An error answer of an OAuth endpoint (RFC 6749 section 5.2) as one line."""
    error = plain(str((data or {}).get("error") or f"HTTP {status}"))[:200]
    description = plain(str((data or {}).get("error_description") or ""))[:300]
    return AuthorizationError(f"{step} refused: {error}{f' ({description})' if description else ''}")
