"""The health subcommands: `%mcp health`, `trace`, `dashboard`, `keepalive`.

In a Jupyter kernel they display live widgets (or, for a trace snapshot, an HTML table
that survives in the saved notebook); in terminal IPython or a script they print text.
"""

from __future__ import annotations

from typing import Any

from ..api import connect as api
from ..session.trace import select
from . import render
from .commands import CommandError, Parser, count, pick, seconds, subcommand


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
    from .widgets import has_widget_frontend

    return has_widget_frontend()


@subcommand("health", "[NAME] [--stderr]", "live health widget: state, round trips, pings and pongs, last frames (text outside Jupyter)")
def _health(args: list[str]) -> None:
    parser = Parser("health")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--stderr", action="store_true", help="show the server's stderr tail")
    ns = parser.parse_args(args)
    conn = pick(ns.name)
    if _frontend():
        from .widgets import health_widget

        _display(health_widget(conn, show_stderr=ns.stderr))
    else:
        print(render.health_text(conn.health, stderr=ns.stderr))


KINDS = ["request", "notification", "response", "error", "invalid", "batch", "event"]


@subcommand(
    "trace",
    "[NAME] [--live] [--last N] [--method M] [--kind K] [--direction in|out|event] [--save PATH]",
    "frame table (--live: a widget that follows new frames; --save: write the matching entries as JSON lines)",
)
def _trace(args: list[str]) -> None:
    parser = Parser("trace")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--live", action="store_true")
    parser.add_argument("--last", type=count, default=50)
    parser.add_argument("--method")
    parser.add_argument("--kind", choices=KINDS)
    parser.add_argument("--direction", choices=["in", "out", "event"])
    parser.add_argument("--save", metavar="PATH")
    ns = parser.parse_args(args)
    conn = pick(ns.name)
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
        from .widgets import trace_widget

        _display(trace_widget(conn, live=True, last=ns.last, **filters))
        return
    entries = conn.trace.entries()
    shown = select(entries, last=ns.last, **filters)
    text = render.trace_text(shown, entries, dropped=conn.trace.dropped)
    if _frontend():
        _display(_Html(render.trace_html(shown, entries, dropped=conn.trace.dropped), text))
    else:
        if ns.live:
            print("(a live table needs a Jupyter widget frontend; this is a snapshot)")
        print(text)


@subcommand("dashboard", "", "every connection in one live widget (a text table outside Jupyter)")
def _dashboard(args: list[str]) -> None:
    Parser("dashboard").parse_args(args)
    if _frontend():
        from .widgets import dashboard_widget

        _display(dashboard_widget(api.connections))
    else:
        print(render.dashboard_text([conn.health for _, conn in sorted(api.connections().items())]))


@subcommand(
    "keepalive",
    "[NAME] [--on | --off | --default] [--interval S] [--timeout S] [--misses N]",
    "show or set a connection's keepalive pings (defaults: %config McpNotebook)",
)
def _keepalive(args: list[str]) -> Any:
    parser = Parser("keepalive")
    parser.add_argument("name", nargs="?")
    switch = parser.add_mutually_exclusive_group()
    switch.add_argument("--on", dest="enabled", action="store_const", const=True)
    switch.add_argument("--off", dest="enabled", action="store_const", const=False)
    switch.add_argument("--default", action="store_true", help="follow the McpNotebook defaults again")
    parser.add_argument("--interval", type=seconds)
    parser.add_argument("--timeout", type=seconds)
    parser.add_argument("--misses", type=count)
    ns = parser.parse_args(args)
    conn = pick(ns.name)
    try:
        ka = conn.keepalive(enabled=ns.enabled, interval=ns.interval, timeout=ns.timeout, misses=ns.misses, reset=ns.default)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if ka.enabled:
        print(f"keepalive {conn.name}: a ping every {ka.interval:g} s, timeout {ka.timeout:g} s, stale after {ka.misses} missed")
    else:
        print(f"keepalive {conn.name}: off")
    return None
