"""The health subcommands: `%mcp health`, `trace`, `dashboard`, `keepalive`.

Each but `dashboard` works on one connection, named as `commands.connection` says.

In a Jupyter kernel they display live widgets (or, for a trace snapshot, an HTML table or
a sequence diagram that survives in the saved notebook); in terminal IPython or a script they print text.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ...api.connecting import connect as api
from ...session.trace import select
from ..render import trace as render
from .commands import (
    LIVE,
    CommandError,
    arg,
    connection,
    connection_of,
    count,
    exclusive,
    flag,
    last,
    save,
    seconds,
    subcommand,
    timeout,
)


def _display(obj: Any) -> None:
    from IPython.display import display

    display(obj)


class _Html:
    """A static display: text/html for notebooks, text/plain for everything else."""

    def __init__(self, html: str, text: str) -> None:
        self._html, self._text = html, text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/html": self._html, "text/plain": self._text}


def _frontend() -> bool:
    from ..widgets.pump import has_widget_frontend

    return has_widget_frontend()


@subcommand(
    "health",
    "live health widget: state, round trips, pings and pongs, last frames (text outside Jupyter)",
    connection(positional=True),
    flag("--stderr", help="show the server's stderr tail"),
    flag("--snapshot", help="the health now, as a static table that stays as it is (no live widget)"),
)
def _health(ns: Namespace) -> None:
    conn = connection_of(ns)
    if ns.snapshot and _frontend():
        health = conn.health
        html = render.health_html(health) + (render.stderr_html(health.stderr_tail) if ns.stderr else "")
        _display(_Html(html, render.health_text(health, stderr=ns.stderr)))
    elif _frontend():
        from ..widgets.pump import health_widget

        _display(health_widget(conn, show_stderr=ns.stderr))
    else:
        print(render.health_text(conn.health, stderr=ns.stderr))


KINDS = ["request", "notification", "response", "error", "invalid", "batch", "event"]


@subcommand(
    "trace",
    "frame table (--live: a widget that follows new frames; --diagram: a sequence diagram; "
    "--save: write the matching entries as JSON lines)",
    connection(positional=True),
    LIVE,
    flag("--diagram", help="the conversation as a sequence diagram (a picture in Jupyter, text elsewhere)"),
    last("how many of the newest matching entries (default: 50)", default=50),
    arg("--method", metavar="M", help="only frames of this method"),
    arg("--kind", metavar="K", choices=KINDS, help=f"only frames of this kind: {', '.join(KINDS)}"),
    arg("--direction", choices=["in", "out", "event"], help="only frames received (in), sent (out), or events"),
    save("matching entries"),
)
def _trace(ns: Namespace) -> None:
    conn = connection_of(ns)
    kind = None if ns.kind in (None, "event") else ns.kind
    direction = "event" if ns.kind == "event" else ns.direction
    filters = {"method": ns.method, "kind": kind, "direction": direction}
    if ns.save:
        try:
            written = conn.trace.to_jsonl(ns.save, last=ns.last, **filters)
        except OSError as exc:
            raise CommandError(f"cannot write {ns.save}: {exc.strerror or exc}") from None
        print(f"saved {written} trace entries to {ns.save}")
        return
    if ns.live and _frontend():
        from ..widgets.trace import trace_widget

        _display(trace_widget(conn, live=True, last=ns.last, show="diagram" if ns.diagram else "table", **filters))
        return
    if ns.diagram:
        diagram = conn.diagram(last=ns.last, **filters)
        if _frontend():
            _display(diagram)
        else:
            print(diagram.text())
        return
    entries = conn.trace.entries()
    shown = select(entries, last=ns.last, **filters)
    marks = conn.trace.marks
    text = render.trace_text(shown, entries, dropped=conn.trace.dropped, marks=marks)
    if _frontend():
        _display(_Html(render.trace_html(shown, entries, dropped=conn.trace.dropped, marks=marks), text))
    else:
        if ns.live:
            print("(a live table needs a Jupyter widget frontend; this is a snapshot)")
        print(text)


@subcommand("dashboard", "every connection in one live widget (a text table outside Jupyter)")
def _dashboard(ns: Namespace) -> None:
    if _frontend():
        from ..widgets.pump import dashboard_widget

        _display(dashboard_widget(api.connections))
    else:
        print(render.dashboard_text([conn.health for _, conn in sorted(api.connections().items())]))


@subcommand(
    "keepalive",
    "show or set a connection's keepalive pings (defaults: %config McpNotebook)",
    connection(positional=True),
    exclusive(
        arg("--on", dest="enabled", action="store_const", const=True, help="send keepalive pings"),
        arg("--off", dest="enabled", action="store_const", const=False, help="send none"),
        flag("--default", help="follow the McpNotebook defaults again"),
    ),
    arg("--interval", type=seconds, metavar="S", help="seconds between keepalive pings"),
    timeout("how long to wait for each keepalive ping's answer"),
    arg("--misses", type=count, metavar="N", help="missed pings before the connection counts as stale"),
)
def _keepalive(ns: Namespace) -> Any:
    conn = connection_of(ns)
    try:
        ka = conn.keepalive(enabled=ns.enabled, interval=ns.interval, timeout=ns.timeout, misses=ns.misses, reset=ns.default)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if ka.enabled:
        print(f"keepalive {conn.name}: a ping every {ka.interval:g} s, timeout {ka.timeout:g} s, stale after {ka.misses} missed")
    else:
        print(f"keepalive {conn.name}: off")
    return None
