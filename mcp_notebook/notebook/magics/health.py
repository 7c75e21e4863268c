"""The health subcommands: `%mcp health`, `dashboard`, `keepalive`. Each but `dashboard` works on
one connection, named as `commands.connection` says; `health` takes a tap's name too
(`commands.tap_of`), and shows its newest session's `TapHealth` (both sides' pings), live in Jupyter
as sessions come and go (`widgets.tap`).

In a Jupyter kernel `health` and `dashboard` display live widgets; in terminal IPython or a script
they print text. `health --snapshot` and the text are the health snapshot's own displays
(`session.health_view`, what `conn.health` shows), so the two never disagree.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ...api.connecting import connect as api
from ...base.text import one_line
from ...session import health_view
from ...session.health import Health
from ...taps.observing import health as tap_health
from ..render import dashboard as render
from . import show
from .commands import CommandError, arg, connection, connection_of, count, exclusive, flag, seconds, subcommand, tap_of, timeout


@subcommand(
    "health",
    "live health widget: state, round trips, pings and pongs, last frames (text outside Jupyter)",
    connection(positional=True),
    flag("--stderr", help="show the server's stderr tail"),
    flag("--snapshot", help="the health now, as a static table that stays as it is (no live widget)"),
)
def _health(ns: Namespace) -> None:
    tapped = tap_of(ns)
    if tapped is not None:
        _tap_health(tapped, snapshot=ns.snapshot)
        return
    conn = connection_of(ns)
    health = conn.health
    if ns.snapshot and show.frontend():  # as `conn.health` shows as a cell's value
        html = health_view.html(health) + (render.stderr_html(health.stderr_tail) if ns.stderr else "")
        show.display(show.Html(html, stderr_text(health) if ns.stderr else health_view.text(health)))
    elif show.frontend():
        from ..widgets.health import health_widget

        show.display(health_widget(conn, show_stderr=ns.stderr))
    else:
        print(stderr_text(health) if ns.stderr else health_view.text(health))


def _tap_health(tapped: Any, *, snapshot: bool) -> None:
    """A tap's newest session's health: in Jupyter a live widget that follows the newest session
    (`--snapshot`: the health's own display, now), its text elsewhere."""
    if show.frontend() and not snapshot:
        from ..widgets.tap import tap_health_widget

        show.display(tap_health_widget(tapped))
        return
    health = tapped.health
    if health is None:
        print(f"tap {tapped.name!r}: no session yet")
    elif show.frontend():
        show.display(health)
    else:
        print(tap_health.text(health))


def stderr_text(health: Health) -> str:
    """The snapshot's text with every stderr line kept, not just the last few."""
    tail = "\n".join(f"    {one_line(line)}" for line in health.stderr_tail)
    lines = [line for line in health_view.text(health).split("\n") if not line.startswith("  stderr ")]
    return "\n".join([*lines, f"  {'stderr':<13}" + ("\n" + tail if tail else "(none)")])


@subcommand("dashboard", "every connection in one live widget (a text table outside Jupyter)")
def _dashboard(ns: Namespace) -> None:
    if show.frontend():
        from ..widgets.health import dashboard_widget

        show.display(dashboard_widget(api.connections))
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
