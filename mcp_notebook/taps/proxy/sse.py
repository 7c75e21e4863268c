"""Event streams as the tap's HTTP proxy reads them: events out of raw bytes, and the one event it rewrites.

`EventScanner` splits the bytes of a `text/event-stream` body into lines and events as the
HTML standard's SSE parser does (lines end in CRLF, LF or CR; `data` lines joined with "\\n";
the last event id carried over), as the bytes arrive, with a bound: an event's data past
`bound` bytes is counted, not kept (`Event.size` says how large it was), and so is a line's.

`EndpointRewriter` is what passes the bytes on. The HTTP+SSE transport (2024-11-05) opens its
stream with an `endpoint` event naming the URL the client is to POST to; when that URL is an
absolute one on the upstream origin, the client would POST past the proxy, so that event's URL,
and nothing else, is rewritten to the proxy's origin. Only a stream's first event can be it: the
rewriter holds the bytes of that event (never comment lines, which go on at once, so keep-alives
are not delayed) until it completes, then passes everything on as it comes, unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

HOLD_LIMIT = 64 * 1024  # a first event larger than this is no endpoint event: passed on as it is
LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Event:
    """One dispatched event: its data (at most the bound), its full size, its name and id."""

    data: bytes
    size: int
    name: str
    event_id: str

    @property
    def clipped(self) -> bool:
        return self.size > len(self.data)


@dataclass(frozen=True)
class Line:
    """One complete line: its length in bytes with its end, its field ("" for a blank line,
    ":" for a comment), its value (clipped), and the event it dispatched, if any."""

    size: int
    field: str
    value: bytes
    event: Event | None = None


class EventScanner:
    """Lines and events out of an event stream's bytes, fed as they come."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._line = bytearray()  # the current line's first bytes (at most `bound` + a little)
        self._line_size = 0  # the current line's full size so far
        self._data = bytearray()
        self._data_size = 0
        self._has_data = False
        self._name = ""
        self._cr_held = False
        self.last_id = ""

    def feed(self, chunk: bytes) -> list[Line]:
        lines: list[Line] = []
        start = 0
        if self._cr_held:  # the last chunk ended in CR: a line end, with this LF or without one
            self._cr_held = False
            lines.append(self._finish_line(self._line_size, 2 if chunk.startswith(b"\n") else 1))
            start = 1 if chunk.startswith(b"\n") else 0
        for end in LINE_END.finditer(chunk, start):
            if end.group() == b"\r" and end.end() == len(chunk):
                self._take(chunk[start : end.start()])
                self._cr_held = True  # perhaps the first half of a CRLF: the next byte tells
                return lines
            self._take(chunk[start : end.start()])
            lines.append(self._finish_line(self._line_size, len(end.group())))
            start = end.end()
        self._take(chunk[start:])
        return lines

    def close(self) -> list[Line]:
        """The end of the stream: a last line without its end is one (an unfinished event is dropped)."""
        if not self._line_size and not self._cr_held:
            return []
        ending = 1 if self._cr_held else 0
        self._cr_held = False
        return [self._finish_line(self._line_size, ending)]

    def _take(self, part: bytes) -> None:
        room = self.bound + 16 - len(self._line)
        if room > 0:
            self._line += part[:room]
        self._line_size += len(part)

    def _finish_line(self, content: int, ending: int) -> Line:
        """The line held so far, `content` bytes long (perhaps clipped), ended by `ending` bytes."""
        raw = bytes(self._line)
        self._line.clear()
        self._line_size = 0
        size = content + ending
        if not content:
            return Line(size, "", b"", self._dispatch())
        if raw.startswith(b":"):
            return Line(size, ":", raw[1:])
        field, colon, value = raw.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        name = field.decode("utf-8", "replace")
        if name == "data":
            self._add_data(value, content - (len(raw) - len(value)))
        elif name == "event":
            self._name = value.decode("utf-8", "replace")
        elif name == "id" and b"\0" not in value:
            self.last_id = value.decode("utf-8", "replace")
        return Line(size, name, value)

    def _add_data(self, value: bytes, full: int) -> None:
        if self._has_data:
            self._append(b"\n", 1)
        self._has_data = True
        self._append(value, full)

    def _append(self, part: bytes, full: int) -> None:
        room = self.bound - len(self._data)
        if room > 0:
            self._data += part[:room]
        self._data_size += full

    def _dispatch(self) -> Event | None:
        event = Event(bytes(self._data), self._data_size, self._name, self.last_id) if self._has_data else None
        self._data.clear()
        self._data_size = 0
        self._has_data = False
        self._name = ""
        return event


class EndpointRewriter:
    """Passes an event stream's bytes on, its first event held until complete and, if it is an
    `endpoint` event naming an absolute URL on `upstream_origin`, rewritten to `proxy_origin`."""

    def __init__(self, upstream_origin: str, proxy_origin: str) -> None:
        self._upstream = _origin(upstream_origin)
        self._proxy = proxy_origin
        self._scanner = EventScanner(HOLD_LIMIT)
        self._held = bytearray()  # bytes of the first event so far, not yet passed on
        self._lines: list[Line] = []  # the held bytes' complete lines
        self.holding = True
        self.endpoint: str | None = None  # the URL the endpoint event named, as the server wrote it

    def feed(self, chunk: bytes) -> bytes:
        """The bytes to pass on now."""
        if not self.holding:
            return chunk
        if len(self._held) + len(chunk) > HOLD_LIMIT:
            return self._let_go(chunk)
        self._held += chunk
        out = bytearray()
        for line in self._scanner.feed(chunk):
            if line.field == ":" and not self._lines or line.field == "" and line.event is None:
                out += self._held[: line.size]  # a comment or an empty event between events: on at once
                del self._held[: line.size]
                self._lines.clear()
                continue
            self._lines.append(line)
            if line.field == "" and line.event is not None:
                out += self._first_event(line.event)
                out += self._let_go(b"")
                break
        return bytes(out)

    def flush(self) -> bytes:
        """The end of the stream: whatever is still held, as it came."""
        return self._let_go(b"")

    def _first_event(self, event: Event) -> bytes:
        size = sum(line.size for line in self._lines)
        raw = bytes(self._held[:size])
        del self._held[:size]
        if event.name != "endpoint":
            return raw
        self.endpoint = event.data.decode("utf-8", "replace")
        rewritten = self._rewrite(self.endpoint)
        if rewritten == self.endpoint:
            return raw
        out, at, replaced = bytearray(), 0, False
        for line in self._lines:
            piece = raw[at : at + line.size]
            at += line.size
            if line.field != "data":
                out += piece
            elif not replaced:  # the URL in one data line, with the line end the server used
                ending = piece[len(piece.rstrip(b"\r\n")) :]
                out += b"data: " + rewritten.encode("utf-8") + ending
                replaced = True
        return bytes(out)

    def _rewrite(self, url: str) -> str:
        try:
            parts = urlsplit(url)
            same = bool(parts.scheme) and _origin(url) == self._upstream
        except ValueError:
            return url
        if not same:
            return url  # a relative URL resolves against the proxy already; another origin is none of ours
        return self._proxy + url[len(f"{parts.scheme}://{parts.netloc}") :]

    def _let_go(self, chunk: bytes) -> bytes:
        self.holding = False
        out = bytes(self._held) + chunk
        self._held.clear()
        self._lines.clear()
        return out


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)
