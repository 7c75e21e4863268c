"""A tap's live views in a Jupyter cell: its health panel (`%mcp health TAPNAME`) and its state
line (a tap shown as a cell's value), redrawn by the render pump as records arrive.

They keep the hand-off of `pump`: built and first rendered by the creating thread, then
re-rendered only by the pump. Both follow the tap's newest session as sessions come and go,
and read a session's health without waiting for its checker (`settle=False`): the pump runs on
the loop an HTTP tap relays on, and never makes it wait; a violation still being checked shows
at a later tick. What they show is the snapshot's own rendering (`TapHealth`, escaped) and the
tap's (`taps.tap_view`); the entries to paste are drawn once and stay as they are.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import ipywidgets as widgets

from ...base.text import esc, one_line
from ...taps import tap_view
from ...taps.observing import health as tap_health
from .live import LivePanel
from .pump import View, pump


def _newest(tap: Any) -> tuple[Any, Any]:
    """(the newest session, its health now without waiting for its checker), or (None, None)."""
    session = tap.session
    return session, (session.observer.health(settle=False) if session is not None else None)


class TapHealthView(View):
    """The health of a tap's newest session: which session it is, then its `TapHealth` table."""

    def __init__(self, tap: Any) -> None:
        super().__init__()
        self.tap = tap
        self.main = widgets.HTML()
        self.widget = LivePanel(self, children=[self.main])
        self._shown: tuple[Any, Any] | None = None
        self._render_now(time.monotonic())

    def key(self) -> Any:
        self._shown = session, health = _newest(self.tap)
        steady = dataclasses.replace(health, taken_at=0.0) if health is not None else None
        return session, len(self.tap.sessions), steady, self.tap.closed

    def render(self) -> None:
        closed = self.tap.closed  # read first: the last state drawn is at least as new as the closing
        shown = self._shown if self._shown is not None and not closed else _newest(self.tap)  # `key`'s may predate the closing
        self.main.value = self._html(*shown)
        self._shown = None
        if closed:
            self.closed = True  # final state shown: the pump lets go of it

    def _which(self, session: Any) -> str:
        count = len(self.tap.sessions)
        state = "tap closed" if self.tap.closed else "live"
        return f"tap {self.tap.name!r} ({state}): newest of {count} session{'s' * (count != 1)}, {one_line(session.label)}"

    def _html(self, session: Any, health: Any) -> str:
        if session is None:
            return f"<div>{esc(self._nothing())}</div>"
        return f'<div style="color:#495057">{esc(self._which(session))}</div>' + tap_health.html(health)

    def _nothing(self) -> str:
        return f"tap {self.tap.name!r}: no session yet" + (" (tap closed)" if self.tap.closed else "")

    def html(self) -> str:
        return self._html(*_newest(self.tap))

    def text(self) -> str:
        session, health = _newest(self.tap)
        return self._nothing() if session is None else f"{self._which(session)}\n{tap_health.text(health)}"


class TapView(View):
    """A tap as a cell's value: where it listens and what it has seen, live; the entries to paste, as drawn."""

    def __init__(self, tap: Any) -> None:
        super().__init__()
        self.tap = tap
        self.head = widgets.HTML()
        self.paste = widgets.HTML(value=tap_view.paste_html(tap))
        self.widget = LivePanel(self, children=[self.head, self.paste])
        self._head: str | None = None
        self._render_now(time.monotonic())

    def key(self) -> Any:
        self._head = tap_view.head_html(self.tap, settle=False)
        return self._head, self.tap.closed

    def render(self) -> None:
        closed = self.tap.closed  # read first: the last state drawn is at least as new as the closing
        fresh = self._head is None or closed  # what `key` read may be from before the closing
        self.head.value = tap_view.head_html(self.tap, settle=False) if fresh else str(self._head)
        self._head = None
        if closed:
            self.paste.value = ""  # nothing to paste into a client any more
            self.closed = True

    def html(self) -> str:
        return tap_view.tap_html(self.tap)

    def text(self) -> str:
        return tap_view.tap_text(self.tap)


def tap_health_widget(tap: Any) -> LivePanel:
    """A live health panel of `tap`'s newest session, updated by the pump while no cell runs."""
    return pump.add(TapHealthView(tap)).widget


def tap_bundle(tap: Any) -> dict[str, Any]:
    """The display bundle of `tap` shown as a value: its live view, with its HTML and text as they are now."""
    bundle = pump.add(TapView(tap)).widget._repr_mimebundle_()
    return dict(bundle) if isinstance(bundle, dict) else {"text/plain": tap_view.tap_text(tap)}


__all__ = ["TapHealthView", "TapView", "tap_bundle", "tap_health_widget"]
