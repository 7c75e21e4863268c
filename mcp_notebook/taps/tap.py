"""`mcp_notebook.tap(NAME)`: watch another client's sessions with a server, live, both sides
checked. A `Tap` listens where stdio relays (`python -m mcp_notebook.tap --name NAME -- ...`)
find it, or with `upstream=URL` runs the HTTP reverse proxy a client is pointed at instead, and
reads like a connection: `trace`, `health`, `violations(side=)`, `diagram()`, one
`TappedSession` per session seen (`sessions`), `wait()` for scripts.

The rules kept here: one open tap per name (`tap(NAME)` again returns it; every tap is closed
when the runtime stops, as connections are); the tap never slows or answers for anyone (it
only reads records); secrets it knows of (the values of secret-looking environment variables
and headers of the configured server it wraps, `secrets=`, and what the HTTP proxy reports) are
given to every session's observer, which redacts them from everything it shows or saves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..api.display import frontend
from ..base.errors import UsageError
from ..base.public import public
from ..runtime import get_runtime
from ..session.trace import Trace
from ..transports.urls import is_secret_name
from . import paste, registry
from .listener import Listener, Stream
from .observing.observer import SessionObserver
from .sessions import Sessions, TappedSession
from .tap_view import tap_html, tap_text
from .wire import rendezvous
from .wire.records import Record

DEFAULT_WAIT = 30.0


def tap(
    name: str,
    *,
    upstream: str | None = None,
    command: Sequence[str] | None = None,
    secrets: Sequence[str] = (),
    port: int = 0,
    catch_up: bool = True,
) -> Tap:
    """Open (or find open) the tap called `name`.

    Without `upstream`, it listens for stdio relays: configure the client to run
    `tap.command(argv)` (or paste `tap.entry("cursor")`) instead of the server's command. With
    `upstream=URL`, it starts a reverse proxy on 127.0.0.1 to that MCP server: configure the
    client with `tap.url`. If `name` is a configured server (`configured_servers()`), its
    command or URL is the one wrapped; `command` names the server's argv otherwise. `secrets`
    are strings never to show. `catch_up` feeds the recordings of relayed sessions still running,
    so a tap opened late sees them from their start.
    """
    try:
        rendezvous.check_name(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    open_ = registry.find(name)
    if open_ is not None:
        if upstream is not None and upstream != open_.upstream:
            raise UsageError(f"tap {name!r} is open already with another upstream; close it first (tap.close())")
        return open_  # type: ignore[no-any-return]
    made = Tap(name, upstream=upstream, command=command, secrets=secrets, port=port)
    made._open(catch_up=catch_up)
    return made


@public
class Tap:
    """A watch on another client's sessions under one name (see `mcp_notebook.tap`)."""

    def __init__(
        self,
        name: str,
        *,
        upstream: str | None = None,
        command: Sequence[str] | None = None,
        secrets: Sequence[str] = (),
        port: int = 0,
    ) -> None:
        self.name = name
        self._target = _configured(name) if upstream is None and command is None else paste.Target()
        self.upstream = upstream if upstream is not None else self._target.url
        self.server_command: tuple[str, ...] | None = tuple(command) if command is not None else (self._target.argv or None)
        self._secrets: list[str] = [s for s in (*secrets, *self._target.secrets) if s]
        self._port = port
        self._sessions = Sessions(name, self._observer)
        self._listener: Listener | None = None
        self._proxy: Any = None
        self._streams: dict[int, TappedSession] = {}  # a relay's connection -> its session
        self._filled: set[int] = set()  # connections whose start was filled in from the recording
        self._no_trace = Trace()  # the trace before any session: one, so a live view sees it stay the same
        self.garbage = 0  # lines from relays that were not records
        self.closed = False

    # ----- opening and closing

    def _open(self, *, catch_up: bool) -> None:
        try:
            if self.upstream is not None:
                self._open_proxy()
            else:
                if catch_up:
                    self._sessions.catch_up()
                self._listener = Listener(rendezvous.socket_path(self.name), self._deliver, self._ended)
                self._listener.start()
        except OSError as exc:
            self._sessions.close()
            raise UsageError(f"tap {self.name!r}: cannot listen: {exc}") from None
        registry.remember(self)
        _close_at_stop()

    def _open_proxy(self) -> None:
        from .proxy.server import TapProxy  # the HTTP stack, only for HTTP taps

        assert self.upstream is not None
        self._proxy = TapProxy(self.upstream, self._sink, secret=self.add_secret, port=self._port)
        self._proxy.start()

    def close(self) -> None:
        """Stop listening (or proxying) and end every session's checks; the trace stays readable.
        Relayed sessions go on: a relay never waits on the notebook."""
        if self.closed:
            return
        self.closed = True
        registry.forget(self)
        if self._listener is not None:
            self._listener.close()
        if self._proxy is not None:
            self._proxy.close()
        self._sessions.close()

    async def _aclose(self) -> None:
        """`close`, on the loop (the runtime's stop hook)."""
        if self.closed:
            return
        self.closed = True
        registry.forget(self)
        if self._listener is not None:
            await self._listener.aclose()
        closing = getattr(self._proxy, "aclose", None)  # else its task ends with the loop's, cancelled
        if closing is not None:
            await closing()
        self._sessions.close()

    def __enter__(self) -> Tap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- where it listens, and what to paste

    @property
    def url(self) -> str | None:
        """The URL to configure an HTTP client with (an HTTP tap's proxy), else None."""
        return str(self._proxy.url) if self._proxy is not None else None

    @property
    def socket_path(self) -> Path | None:
        """The Unix socket stdio relays of this name connect to (a stdio tap's), else None."""
        return self._listener.path if self._listener is not None else None

    def command(self, argv: Sequence[str] | None = None) -> list[str]:
        """The command a client runs instead of `argv` (the server's): the relay, streaming here."""
        argv = argv if argv is not None else self.server_command
        if not argv:
            raise UsageError(f"tap {self.name!r}: give the server's command, e.g. tap.command(['npx', 'server'])")
        return paste.wrapped(self.name, [str(a) for a in argv])

    def entry(self, client: str = "claude-code", command: Sequence[str] | None = None) -> paste.PasteEntry:
        """The snippet to paste into `client`'s configuration ("claude-code", "cursor", "vscode",
        "claude-desktop") so it goes through this tap; Claude Code's `claude mcp add` line is its `.line`."""
        return paste.entry(client, self.name, self._paste_target(command))

    def entries(self) -> dict[str, paste.PasteEntry | str]:
        """Every client's entry (or, where a client cannot take one, the one line that says why)."""
        found: dict[str, paste.PasteEntry | str] = {}
        for client in paste.CLIENTS:
            try:
                found[client] = self.entry(client)
            except UsageError as exc:
                found[client] = str(exc)
        return found

    def _paste_target(self, command: Sequence[str] | None) -> paste.Target:
        t = self._target
        if self.url is not None:
            return paste.Target(url=self.url, headers=t.headers, secrets=tuple(self._secrets))
        return paste.Target(argv=tuple(self.command(command)), env=t.env, cwd=t.cwd, secrets=tuple(self._secrets))

    # ----- what it saw

    @property
    def sessions(self) -> list[TappedSession]:
        """Every session seen, oldest first; each has its own trace, health and violations."""
        return self._sessions.all()

    @property
    def session(self) -> TappedSession | None:
        """The newest session (what `trace`, `health` and `violations` read), or None."""
        return self._sessions.newest()

    @property
    def trace(self) -> Trace:
        """The newest session's trace (empty before any): `to_jsonl(path)` saves a cassette."""
        newest = self.session
        return newest.trace if newest is not None else self._no_trace

    @property
    def health(self) -> Any:
        """The newest session's `TapHealth`, or None before any session."""
        newest = self.session
        return newest.health if newest is not None else None

    def violations(self, side: str | None = None) -> list[Any]:
        """The newest session's broken rules, by `side` ("client" or "server"; both if None)."""
        if side not in (None, "client", "server"):
            raise UsageError(f"side is 'client' or 'server', not {side!r}")
        newest = self.session
        return newest.violations(side) if newest is not None else []

    def diagram(self, *, last: int | None = None, **filters: Any) -> Any:
        """The newest session as a sequence diagram (a picture in Jupyter, text elsewhere)."""
        from ..api.display.diagram import DIAGRAM_ROWS, build

        return build(self.name, self.trace, last=DIAGRAM_ROWS if last is None else last, **filters)

    @property
    def frames(self) -> int:
        """Frames seen, both ways, in every session."""
        return sum(sum(s.frames.values()) for s in self.sessions)

    def wait(self, frames: int | Callable[[Tap], bool] | None = None, *, timeout: float | None = DEFAULT_WAIT) -> Tap:
        """Wait until the tap has seen `frames` frames (all sessions together), or until
        `frames(tap)` is true when it is a function, or (None) until the newest session ended;
        TimeoutError after `timeout` seconds."""
        if callable(frames):
            check = frames
            what = "the condition"
        elif frames is None:
            check = _ended
            what = "a session to end"
        else:
            wanted = int(frames)
            check = lambda tap: tap.frames >= wanted  # noqa: E731
            what = f"{wanted} frames (seen: {{seen}})"
        if not self._sessions.wait(lambda: check(self), timeout):
            raise TimeoutError(f"tap {self.name!r}: waited {timeout:g} s for {what.format(seen=self.frames)}")
        return self

    def add_secret(self, text: str) -> None:
        """Never show `text` (every session's observer redacts it, and those to come)."""
        if not text or text in self._secrets:
            return
        self._secrets.append(text)
        for session in self.sessions:
            session.observer.add_secret(text)

    # ----- records in

    def _observer(self, transport: str) -> SessionObserver:
        return SessionObserver(transport=transport, name=self.name, secrets=tuple(self._secrets))

    def _deliver(self, stream: Stream, record: Record) -> None:
        session = self._streams.get(stream.number)
        if session is None:  # a relay's first line is its session's HELLO: then what it recorded before
            session = self._streams[stream.number] = self._sessions.from_relay(record, stream.number)
            self._sessions.feed(session, (record,))
            self._sessions.fill_gap(session)
            return
        if stream.number not in self._filled:  # and once more (the recording may have been behind)
            self._filled.add(stream.number)
            self._sessions.fill_gap(session, record.seq)
        self._sessions.feed(session, (record,))

    def _ended(self, stream: Stream) -> None:
        self._streams.pop(stream.number, None)
        self._filled.discard(stream.number)
        self.garbage += stream.garbage
        self._sessions.wake()

    def _sink(self, record: Record) -> None:
        number = (record.detail or {}).get("session", 0)
        self._sessions.feed(self._sessions.session(("http", number), "http"), (record,))

    # ----- display

    def __repr__(self) -> str:
        where = self.url or self.socket_path
        state = "closed" if self.closed else f"listening on {where}"
        return f"<Tap {self.name!r}: {state}, {len(self.sessions)} sessions, {self.frames} frames>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(tap_text(self))

    def _repr_html_(self) -> str:
        return tap_html(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """A live view where the front end draws one (a Jupyter kernel); else None: the reprs above."""
        return frontend.current().tap_bundle(self)


def _ended(tap: Tap) -> bool:
    newest = tap.session
    return newest is not None and newest.ended


def _configured(name: str) -> paste.Target:
    """The configured server called `name`, as a target to wrap (none if there is none)."""
    from ..api.connecting.configured import servers

    try:
        entry = servers().named(name)
    except UsageError:
        return paste.Target()
    hidden = tuple(v for k, v in (*entry.env, *entry.headers) if is_secret_name(k) and v)
    if entry.url is not None:
        if "${" in entry.url:
            raise UsageError(f"{name}: its configured URL takes values from this machine; give the tap upstream=URL")
        return paste.Target(url=entry.url, headers=entry.headers, secrets=hidden)
    return paste.Target(argv=(entry.command or "", *entry.args), env=entry.env, cwd=entry.cwd, secrets=hidden)


_hooked: list[object] = []  # the runtimes whose stop closes the taps


def _close_at_stop() -> None:
    runtime = get_runtime()
    if not any(r is runtime for r in _hooked):
        _hooked.append(runtime)
        runtime.on_stop(_close_all_taps)


async def _close_all_taps() -> None:
    """The runtime's stop hook: close every tap (on the loop, so without blocking calls into it)."""
    for open_ in list(registry.taps().values()):
        await open_._aclose()
