"""A tap's live views (`notebook.widgets.tap`, and the live trace on a tap): fed records by a
stand-in relay (the relay's wire, one encoded record a line), they change key as records arrive,
follow the newest session as sessions come, never wait on the frame checker (the pump runs on the
loop an HTTP tap relays on), draw server text inert, and let go once the tap is closed."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.widgets import WIDGET_MIME, XSS, assert_inert

import mcp_notebook
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.notebook.widgets.pump import View, views_of
from mcp_notebook.notebook.widgets.tap import TapHealthView, TapView
from mcp_notebook.notebook.widgets.trace import TraceView
from mcp_notebook.taps import registry
from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.records import CLIENT, EVENT, HELLO, SERVER, Record, encode

INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"%s","version":"1"}}}'
)
INITIALIZED = (
    '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}'
)


@pytest.fixture(autouse=True)
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tapw-", dir="/tmp"))
    monkeypatch.setenv(rendezvous.ENV_DIR, str(folder))
    yield folder
    for left in registry.taps().values():
        left.close()
    shutil.rmtree(folder, ignore_errors=True)


class Relay:
    """A stand-in relay of one session: its HELLO, then the frames it is given, on one stream."""

    def __init__(self, tap: mcp_notebook.Tap, session: str, name: str = "relay") -> None:
        self.tap, self.seq = tap, 1
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        assert tap.socket_path is not None
        self.sock.connect(str(tap.socket_path))
        self.sock.sendall(encode(Record(1, EVENT, 1.0, 1.0, name=HELLO, detail={"session": session, "name": name})))

    def send(self, *frames: tuple[str, str]) -> None:
        """Send `frames` ((side, text) each) and wait until the tap has fed them all."""
        wanted = self.tap.frames + len(frames)
        for side, text in frames:
            self.seq += 1
            at = 1.0 + self.seq / 1000
            self.sock.sendall(encode(Record(self.seq, side, at, at, text.encode())))
        self.tap.wait(wanted, timeout=10)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def tap() -> Iterator[mcp_notebook.Tap]:
    opened = mcp_notebook.tap("watched", catch_up=False)
    yield opened
    opened.close()


def ticked(view: object) -> bool:
    """Whether the view renders at a tick with no refresh due (only a changed key makes it)."""
    return bool(view.tick(view._last_render))  # type: ignore[attr-defined]


def primed(view: View) -> View:
    """`view` once ticked, so its key is known (built, it is drawn but has no key yet)."""
    view.tick(view._last_render)
    return view


def test_the_health_panel_follows_records_and_the_newest_session_inert(tap: mcp_notebook.Tap):
    view = primed(TapHealthView(tap))
    assert "no session yet" in view.main.value and "no session yet" in repr(view.widget)
    assert not ticked(view)
    first = Relay(tap, "one", name=XSS)
    first.send((CLIENT, INITIALIZE % XSS), (SERVER, INITIALIZED))
    assert ticked(view)  # the key changed: the pump redraws
    shown = view.main.value
    assert_inert(shown)
    assert "&lt;script&gt;" in shown and "newest of 1 session," in shown and "1 out" in shown and "1 in" in shown
    assert not ticked(view)  # nothing new: nothing drawn
    first.send((CLIENT, '{"jsonrpc":"2.0","id":2,"method":"ping"}'))
    assert ticked(view) and "2 out" in view.main.value
    second = Relay(tap, "two")
    second.send((CLIENT, INITIALIZE % "second"))
    assert ticked(view)
    assert "newest of 2 sessions, stdio session two" in view.main.value and "second 1" in view.main.value
    assert "\x1b" not in view.text() and "newest of 2 sessions" in view.text()
    first.close()
    second.close()
    tap.close()
    assert ticked(view) and view.closed and "tap closed" in view.main.value  # its last state, then let go


def test_the_taps_line_is_live_and_its_paste_blocks_stay(tap: mcp_notebook.Tap):
    tap.server_command = ("server", "--flag")
    view = primed(TapView(tap))
    paste = view.paste.value
    assert "0 sessions" in view.head.value and "Paste into a client" in paste
    relay = Relay(tap, "one", name=XSS)
    relay.send((CLIENT, INITIALIZE % "c"), (SERVER, INITIALIZED))
    assert ticked(view)
    assert "1 session, frames: 1 from the client, 1 from the server" in view.head.value
    assert_inert(view.head.value)
    relay.send((SERVER, '{"jsonrpc":"2.0","id":0,"method":"ping"}'), (CLIENT, '{"jsonrpc":"2.0","id":0,"result":{"x":1}}'))
    assert ticked(view) and "2 from the server" in view.head.value
    assert view.paste.value == paste
    relay.close()
    tap.close()
    assert ticked(view) and view.closed and "closed" in view.head.value and view.paste.value == ""


def test_the_live_views_never_wait_on_the_frame_checker(tap: mcp_notebook.Tap, monkeypatch: pytest.MonkeyPatch):
    relay = Relay(tap, "one")
    relay.send((CLIENT, INITIALIZE % "c"))
    session = tap.session
    assert session is not None

    def waited(*_: object, **__: object) -> bool:
        raise AssertionError("a live view waited for the frame checker")

    monkeypatch.setattr(session.observer.checker, "settled", waited)
    for view in (primed(TapHealthView(tap)), primed(TapView(tap))):
        relay.send((SERVER, INITIALIZED))
        assert ticked(view)
    relay.close()


def test_the_live_trace_follows_the_taps_newest_session(tap: mcp_notebook.Tap):
    view = primed(TraceView(tap))
    assert view.name == "watched" and "0 of 0 entries" in view.status.value
    first = Relay(tap, "one")
    first.send((CLIENT, INITIALIZE % "first-client"))
    assert ticked(view) and "initialize" in view.table.value and "2 of 2 entries" in view.status.value  # its start, a frame
    assert not ticked(view)
    second = Relay(tap, "two")
    second.send((CLIENT, '{"jsonrpc":"2.0","id":7,"method":"tools/list"}'), (SERVER, '{"jsonrpc":"2.0","id":7,"result":{}}'))
    assert ticked(view)
    assert "tools/list" in view.table.value and "initialize" not in view.table.value and "3 of 3 entries" in view.status.value
    first.close()
    second.close()


def test_a_tap_shown_as_a_value_in_a_kernel_is_a_live_widget(tap: mcp_notebook.Tap, shown_as):
    shown_as("ipython")
    assert tap._repr_mimebundle_() is None  # its reprs, as they are now
    shown_as("kernel")
    bundle = tap._repr_mimebundle_()
    assert bundle is not None and WIDGET_MIME in bundle
    assert "tap watched" in bundle["text/html"] and "tap 'watched'" in bundle["text/plain"]  # for saved notebooks


def test_health_of_a_tap_in_jupyter_is_live_and_snapshot_keeps_the_table(tap: mcp_notebook.Tap, shell, monkeypatch):
    shown: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", shown.append)
    relay = Relay(tap, "one")
    relay.send((CLIENT, INITIALIZE % "c"))
    shell.run_line_magic("mcp", "health watched")
    shell.run_line_magic("mcp", "health watched --snapshot")
    shell.run_line_magic("mcp", "trace watched --live")
    live, snapshot, trace = shown
    assert isinstance(views_of(live), TapHealthView) and "1 out" in views_of(live).html()
    assert isinstance(snapshot, mcp_notebook.TapHealth) and snapshot.frames_out == 1
    assert isinstance(views_of(trace), TraceView) and views_of(trace).source is tap
    relay.close()
