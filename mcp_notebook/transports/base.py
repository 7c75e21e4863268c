"""The contract between a session and its transport, in both directions.

A transport moves frames and reports what happens on the wire; it knows nothing of
MCP methods. It pushes what it reads into a `Sink` (the session) from the event loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import anyio.abc

from ..protocol.jsonrpc import RequestId

# The largest message a server may send in one piece: a stdio line, an HTTP body, an SSE event.
MAX_FRAME_BYTES = 64 * 1024 * 1024


def size_text(size: int) -> str:
    """A byte count as people say it: "64 MB", "512 kB", "10 bytes" (binary multiples)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


class Sink(Protocol):
    """What a transport reports to its session."""

    def frame_received(self, text: str, via: str | None = None, problem: str | None = None) -> None:
        """One frame's text arrived (`via`: which stream, where there are several; `problem`: why
        its bytes are no frame's, such as not being UTF-8, the text then decoded with replacements)."""

    def frame_here(self, text: str) -> bool:
        """On the transport's own reading thread: take the frame now if it needs no event loop
        (an answer a blocked caller waits for, a server ping); False leaves it to `frame_received`."""
        ...

    def hung_up(self) -> None:
        """The peer is gone: the process exited or the connection cannot go on."""

    def send_failed(self, request_id: RequestId | None, error: Exception) -> None:
        """A frame could not be delivered; `request_id` names the request it carried, if any."""

    def session_expired(self, request_id: RequestId | None, current: bool = True) -> None:
        """The server no longer knows our session (HTTP 404 with a session id).

        `current` is False when the 404 answered a session id that was already replaced.
        """

    def violated(self, rule: str, message: str, section: str) -> None:
        """The server broke a rule of the transport no frame shows (`section`: of the spec, for its URL)."""

    def awaiting(self, request_id: RequestId) -> bool:
        """Whether a request of ours still waits for its response (to resume a dropped stream)."""
        ...

    def listening_changed(self, down: str | None) -> None:
        """The stream the server reaches us on between our requests is down (`down` says since
        when and why), or open again (None)."""

    async def caught_up(self) -> None:
        """Wait while the session is behind with the frames pushed in (a reader on the loop calls
        it between frames: what is not read yet waits on the wire, not in memory)."""

    def wait_caught_up(self) -> None:
        """The same, for a reader on a thread of its own (blocks that thread)."""


class Transport(Protocol):
    """What a session needs from a transport."""

    kind: str
    exit_code: int | None
    stderr_tail: deque[str]
    # `send` may be called from any thread (else from the event loop's only).
    sends_from_any_thread: bool

    def describe(self) -> str:
        """Where the server is (command line or URL), with secrets redacted."""
        ...

    async def open(self, task_group: anyio.abc.TaskGroup, sink: Sink) -> None:
        """Start (spawn the process, create the HTTP client); frames flow into `sink` afterwards."""

    def send(
        self,
        text: str,
        request_id: RequestId | None = None,
        *,
        headers: dict[str, str] | None = None,
        opens: bool = False,
    ) -> None:
        """Hand one frame to the wire now, never blocking.

        `request_id` when it is a request; `headers` for transports that carry them;
        `opens` marks the frame that opens a legacy connection (HTTP may fall back then).
        """

    def use_modern(self, protocol_version: str) -> None:
        """From now on speak the stateless modern era at `protocol_version`."""

    def cancel(self, request_id: RequestId) -> None:
        """Stop waiting for a request's reply on the wire (HTTP: close its stream)."""

    def initialized(self, protocol_version: str) -> None:
        """The handshake is done: use `protocol_version` from now on (and open listening streams)."""

    async def listening(self) -> None:
        """After `initialized`: wait until the server can reach us between our requests (HTTP:
        the GET listening stream is open, or refused), at most the transport's connect timeout.
        Servers send requests there at once, and some drop them while it is not open yet."""

    def reset_session(self) -> None:
        """Forget the server-side session, before a new handshake."""

    def probe_began(self) -> None:
        """The era probe goes out: what the server writes until the era is settled (`initialized`,
        `use_modern`) is its answer to the probe, not news of its own (stdio: its stderr lines are
        marked so in the trace and kept out of its last words, unless it exits meanwhile)."""

    def probe_refused(self) -> None:
        """The probe's answer said "not modern": the handshake follows on a clean slate, keeping
        nothing that answer left (HTTP: no session id, no cookie)."""

    async def wait_exit(self, timeout: float) -> int | None:
        """After a hang-up: wait for the peer process to exit; its exit code, if it has one."""

    async def aclose(self, grace: float | None = None) -> None:
        """Close politely, then firmly; `grace` is how long the peer gets to go by itself."""


@runtime_checkable
class FrameBatches(Protocol):
    """What a transport that `sends_from_any_thread` may add: several frames in as few writes
    as they fit in, so frames queued while one thread writes go out together."""

    def writable(self) -> None:
        """Raise ConnectionClosed if a frame handed over now could not go out."""

    def send_frames(self, texts: Sequence[str]) -> None:
        """Write the frames in order (any thread, never blocking); ConnectionClosed if it cannot."""
