"""Live ipywidgets views of a connection's server log and resource subscriptions.

They follow the hand-off of `pump`: built and first rendered by the creating thread,
then re-rendered only by the throttled render pump on the runtime's loop thread. A
subscriptions view asked to `read` starts each re-read from the pump as a task of the
session (never awaited there, so neither the pump nor the frame path waits for it) and
shows the result at a later tick. Nothing here prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from ...api.calls.progress import LOG_LEVELS
from ...api.client_side import logs as server_log
from ...api.connection import session_of
from ...api.display.panels import (
    LOG_ROWS,
    LogRow,
    SubscriptionRow,
    clock,
    log_key,
    log_rows,
    logs_html,
    logs_text,
    subscription_rows,
    subscriptions_html,
    subscriptions_text,
)
from ...api.resources import updates as resource_updates
from ...api.results.objects import ResourceResult
from ...base.errors import ConnectionClosed
from ...base.plural import counted
from ...base.text import esc
from ...runtime import get_runtime
from .pump import Panel, View, pump


class LivePanel(Panel):
    """A Panel whose repr is its view's text, so a terminal shows a table, not widget internals."""

    def __repr__(self) -> str:
        return self._view.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._view.text())


class LogView(View):
    """The server's log messages, newest at the bottom, with a level filter and a cell toggle."""

    def __init__(self, connection: Any, *, level: str | None = None, unrouted_only: bool = False, rows: int = LOG_ROWS) -> None:
        super().__init__()
        self.connection = connection
        self.fx = server_log.of(connection)
        self.rows = max(1, rows)
        fit = {"style": {"description_width": "initial"}, "layout": widgets.Layout(width="auto")}
        self.level = widgets.Dropdown(
            options=[("all", ""), *[(f"≥ {name}", name) for name in LOG_LEVELS]], value=level or "", description="level", **fit
        )
        self.unrouted = widgets.ToggleButton(
            value=unrouted_only,
            description="hide cell messages",
            icon="filter",
            tooltip="hide the messages already shown in the cell that was waiting",
            **fit,
        )
        self.status = widgets.Label()
        self.table = widgets.HTML()
        for control in (self.level, self.unrouted):
            control.observe(self.touch, names="value")
        self.widget = LivePanel(self, children=[widgets.HBox([self.level, self.unrouted]), self.status, self.table])
        self._render_now(time.monotonic())

    def _rows(self) -> tuple[list[LogRow], list[LogRow]]:
        """(shown, matching): the newest `rows` of the messages that pass the filters."""
        matching = log_rows(self.fx, level=self.level.value or None, unrouted_only=self.unrouted.value)
        return matching[-self.rows :], matching

    def _status(self, shown: list[LogRow], matching: list[LogRow]) -> str:
        state = "connection closed" if self.connection.closed else "live"
        in_cell = sum(r.in_cell for r in matching)
        return (
            f"{state}: {len(shown)} of {len(self.fx.logs)} server log messages shown, newest at the bottom"
            f" ({in_cell} of them {'was' if in_cell == 1 else 'were'} shown in the waiting cell)"
        )

    def key(self) -> Any:
        return log_key(self.fx), self.level.value, self.unrouted.value, self.connection.closed

    def render(self) -> None:
        shown, matching = self._rows()
        self.table.value = logs_html(shown, len(self.fx.logs))
        self.status.value = self._status(shown, matching)
        if self.connection.closed:
            self.closed = True  # final state shown: the pump lets go of it

    def html(self) -> str:
        shown, matching = self._rows()
        return f"<div>{esc(self._status(shown, matching))}</div>" + logs_html(shown, len(self.fx.logs))

    def text(self) -> str:
        shown, matching = self._rows()
        return f"{self.connection.name}: {self._status(shown, matching)}\n{logs_text(shown, len(self.fx.logs))}"


@dataclass
class Reading:
    """The latest re-read of one subscribed resource (written on the loop thread only)."""

    seen: int = -1  # the update count when the last read started
    busy: bool = False
    reads: int = 0
    text: str = ""
    error: str | None = None
    at: float | None = None

    def shown(self) -> str:
        if self.reads == 0:
            return "reading…" if self.busy else ""
        return f"(read failed: {self.error})" if self.error else self.text


class SubscriptionsView(View):
    """The connection's subscriptions (or one URI): state, update count, last update, and
    with `read` the latest content."""

    def __init__(self, connection: Any, uri: str | None = None, *, read: bool = False) -> None:
        super().__init__()
        self.connection = connection
        self.fx = resource_updates.of(connection)
        self.uri = uri
        self.read = read
        self.reading: dict[str, Reading] = {}
        self.was_subscribed: frozenset[str] = frozenset()  # replaced, never mutated: other threads read it
        self.ended: str | None = None
        self.status = widgets.Label()
        self.table = widgets.HTML()
        self.widget = LivePanel(self, children=[self.status, self.table])
        self._latest: list[SubscriptionRow] = []
        self._render_now(time.monotonic())

    # ----- pump side -----

    def _snapshot(self) -> list[SubscriptionRow]:
        rows = subscription_rows(self.fx, None if self.uri is None else [self.uri], self.was_subscribed)
        now_subscribed = {r.uri for r in rows if r.state == "subscribed"}
        if not now_subscribed <= self.was_subscribed:
            self.was_subscribed = self.was_subscribed | now_subscribed
        return rows

    def tick(self, now: float) -> bool:
        self._latest = self._snapshot()
        if self.read and get_runtime().in_loop_thread():
            self._start_reads(self._latest)
        return super().tick(now)

    def _start_reads(self, rows: list[SubscriptionRow]) -> None:
        """Re-read each subscribed resource whose update count moved (one read at a time each)."""
        for row in rows:
            if row.state != "subscribed" or self.connection.closed:
                continue
            reading = self.reading.setdefault(row.uri, Reading())
            if reading.busy or reading.seen == row.updates:
                continue
            reading.busy, reading.seen = True, row.updates
            try:
                session_of(self.connection).spawn(self._read, row.uri, reading)
            except ConnectionClosed as exc:
                reading.busy, reading.error = False, str(exc)

    async def _read(self, uri: str, reading: Reading) -> None:
        """A task of the session: `resources/read`, its result kept for the next render."""
        try:
            raw = await session_of(self.connection).request("resources/read", {"uri": uri})
            result = ResourceResult(uri, raw if isinstance(raw, dict) else {})
            reading.text, reading.error = result.text or result._text(), None  # blobs: a one-line summary
        except Exception as exc:  # noqa: BLE001 - shown in the panel; never raised on the session
            reading.error = f"{type(exc).__name__}: {exc}"
        finally:
            reading.busy = False
            reading.reads += 1
            reading.at = time.time()

    def key(self) -> Any:
        reads = tuple((uri, r.reads, r.busy) for uri, r in list(self.reading.items()))
        return tuple(self._latest), reads, self.connection.closed

    def render(self) -> None:
        rows = self._latest or self._snapshot()
        if self.connection.closed:
            self.ended = "connection closed; no longer updated"
        elif self.uri is not None and rows and rows[0].state == "unsubscribed":
            self.ended = f"unsubscribed at {clock(time.time(), millis=False)}; no longer updated"
        self.table.value = subscriptions_html(rows, self._contents())
        self.status.value = self._status(rows)
        if self.ended:
            self.closed = True  # final state shown: the pump lets go of it

    # ----- any thread -----

    def _contents(self) -> dict[str, str] | None:
        return {uri: r.shown() for uri, r in list(self.reading.items())} if self.read else None

    def _status(self, rows: list[SubscriptionRow]) -> str:
        if self.ended:
            return self.ended
        if self.uri is not None:
            row = rows[0]
            return f"live: {row.state}, {counted(row.updates, 'update')}"
        subscribed = sum(r.state == "subscribed" for r in rows)
        return f"live: {counted(subscribed, 'subscription')}, {counted(sum(r.updates for r in rows), 'update')}"

    def _rows_now(self) -> list[SubscriptionRow]:
        return subscription_rows(self.fx, None if self.uri is None else [self.uri], self.was_subscribed)

    def html(self) -> str:
        rows = self._rows_now()
        return f"<div>{esc(self._status(rows))}</div>" + subscriptions_html(rows, self._contents())

    def text(self) -> str:
        rows = self._rows_now()
        return f"{self.connection.name}: {self._status(rows)}\n{subscriptions_text(rows, self._contents())}"


def log_widget(connection: Any, **options: Any) -> LivePanel:
    """A live log panel for `connection`, updated by the pump while no cell runs."""
    return pump.add(LogView(connection, **options)).widget


def subscriptions_widget(connection: Any, uri: str | None = None, *, read: bool = False) -> LivePanel:
    """A live subscriptions panel for `connection` (or for one `uri`)."""
    return pump.add(SubscriptionsView(connection, uri, read=read)).widget


__all__ = ["LivePanel", "LogView", "SubscriptionsView", "log_widget", "subscriptions_widget"]
