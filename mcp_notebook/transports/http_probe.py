"""One-off HTTP exchanges that report what came back as plain data: the connection doctor's
probes (an `initialize` POST, a GET of the URL, a DELETE of a session), outside any transport.

A `Reply` is the status, the headers and (when read) the start of the body; an exchange that
got no answer raises `ProbeFailed`, whose text is `describe_failure`'s one line with the URL
redacted. The rules kept here: nothing of httpx2 leaves this module; a body is read only as far
as a byte limit and a deadline, and an event stream only until its first event with data;
redirects are not followed (`Reply.location` says where one points, `origin_of` whether that is
the same origin: the caller decides). The client is the package's one HTTP configuration
(`http_client.sync_client`), so a probe goes through the connection's proxy and trust store.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from ..base.errors import TransportError
from .http_client import HttpSettings, sync_client
from .http_errors import describe_failure, origin, redact_url


@dataclass(frozen=True)
class Headers:
    """A response's headers, their names case-insensitive; a name sent twice keeps both values."""

    pairs: tuple[tuple[str, str], ...] = ()

    def get_list(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self.pairs if key.lower() == lowered]

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of `name`, several joined with ", " (as one header would carry them)."""
        values = self.get_list(name)
        return ", ".join(values) if values else default


@dataclass(frozen=True)
class Reply:
    """What a server answered: `url` (the one asked), `status`, `reason`, `headers`, `body` (the
    first bytes read, as text; empty when not read), and `location`: where a redirect points,
    made absolute (None when the answer is no redirect)."""

    url: str
    status: int
    reason: str
    headers: Headers
    body: str = ""
    location: str | None = None

    @property
    def content_type(self) -> str:
        """The media type, lower case, without parameters ("" when none is given)."""
        return (self.headers.get("content-type") or "").partition(";")[0].strip().lower()


class ProbeFailed(TransportError):
    """No answer came (refused, a TLS failure, a timeout, a broken connection): the message says
    why in one line; `timed_out` tells a server that is slow from one that is not there."""

    def __init__(self, message: str, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


Read = Callable[[Reply], bool]


def any_but_redirect(reply: Reply) -> bool:
    return reply.location is None


class HttpProbe:
    """A blocking client for a series of probes, each bounded by `timeout` seconds per wait; `close()` ends it."""

    def __init__(self, settings: HttpSettings, timeout: float) -> None:
        self.timeout = timeout
        self._client = sync_client(settings, timeout=timeout)

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        json: Any = None,
        limit: int = 0,
        deadline: float | None = None,
        read: Read = any_but_redirect,
    ) -> Reply:
        """Send one request; its answer, with up to `limit` bytes of the body when `read(head)` says
        so, read until `deadline` (a `time.monotonic()` time; `timeout` after the head if None)."""
        try:
            with self._client.stream(method, url, json=json, headers=headers) as response:
                location = response.headers.get("location") if response.is_redirect else None
                head = Reply(
                    url,
                    response.status_code,
                    response.reason_phrase,
                    Headers(tuple(response.headers.multi_items())),
                    location=str(response.url.join(location)) if location else None,
                )
                if not limit or not read(head):
                    return head
                ends = deadline if deadline is not None else time.monotonic() + self.timeout
                return Reply(head.url, head.status, head.reason, head.headers, _read(response, limit, ends), head.location)
        except httpx2.HTTPError as exc:
            raise ProbeFailed(describe_failure(exc, redact_url(url)), isinstance(exc, httpx2.TimeoutException)) from None

    def close(self) -> None:
        self._client.close()


def origin_of(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and effective port of `url`: what a redirect must keep to stay where it was."""
    return origin(httpx2.URL(url))


def _read(response: httpx2.Response, limit: int, deadline: float) -> str:
    """At most `limit` bytes of the body, read until the deadline; an event stream only until
    its first event with data (a priming event with an empty `data:` does not count)."""
    chunks, size = [], 0
    streaming = "event-stream" in response.headers.get("content-type", "")
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit or time.monotonic() > deadline:
            break
        if streaming and event_data(b"".join(chunks).decode("utf-8", errors="replace"), complete=True):
            break
    return b"".join(chunks)[:limit].decode("utf-8", errors="replace")


def event_data(text: str, complete: bool = False) -> list[str]:
    """The non-empty data of each event in an event stream's text (only finished events if `complete`)."""
    blocks = re.split(r"\r?\n\r?\n", text.replace("\r\n", "\n"))
    if complete:
        blocks = blocks[:-1]  # the last block may still be arriving
    found = []
    for block in blocks:
        data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        if data.strip():
            found.append(data)
    return found
