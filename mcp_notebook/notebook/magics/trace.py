"""The subcommands of what crossed the wire: `%mcp trace` (the frame table; `--live` a widget that
follows new frames, `--diagram` a sequence diagram, `--save` JSON lines) and `violations` (the
rules the server's frames broke, over `conn.violations`). An HTML table in Jupyter (it survives in
the saved notebook), text elsewhere; each works on one connection named as `commands.connection` says,
or on a tap (`commands.tap_of`): its newest session, with violations of both sides (`--side`).
"""

from __future__ import annotations

from argparse import Namespace

from ...protocol.frame_rules import RULES
from ...session.trace import select
from ...taps.observing.pings import PING_RULES
from ..render import trace as render
from ..render import violations as violations_view
from . import show
from .commands import LIVE, CommandError, arg, connection, connection_of, flag, last, save, subcommand, tap_of

SIDES = ["client", "server"]
CHOICES = [*RULES, *PING_RULES]  # a tap judges the pings of both sides too
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
    conn = tap_of(ns) or connection_of(ns)
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
    if ns.live and show.frontend():
        from ..widgets.trace import trace_widget

        show.display(trace_widget(conn, live=True, last=ns.last, show="diagram" if ns.diagram else "table", **filters))
        return
    if ns.diagram:
        diagram = conn.diagram(last=ns.last, **filters)
        if show.frontend():
            show.display(diagram)
        else:
            print(diagram.text())
        return
    entries = conn.trace.entries()
    shown = select(entries, last=ns.last, **filters)
    marks = conn.trace.marks
    text = render.trace_text(shown, entries, dropped=conn.trace.dropped, marks=marks)
    if show.frontend():
        show.display(show.Html(render.trace_html(shown, entries, dropped=conn.trace.dropped, marks=marks), text))
    else:
        if ns.live:
            print("(a live table needs a Jupyter widget frontend; this is a snapshot)")
        print(text)


@subcommand(
    "violations",
    "the rules the server's frames broke (a tap's name: both sides'): which frame, where, the rule, the spec section "
    "(connect --strict: fail on one)",
    connection(positional=True),
    arg("--side", choices=SIDES, help="only the rules this side broke (a tap checks both the client and the server)"),
    arg("--rule", choices=CHOICES, help=f"only this rule: {', '.join(CHOICES)}"),
    last("how many of the newest (default: 50)", default=50),
)
def _violations(ns: Namespace) -> None:
    tapped = tap_of(ns)
    if tapped is not None:
        name, every, who = tapped.name, tapped.violations(), "both sides"
    else:
        conn = connection_of(ns)
        name, every, who = conn.name, conn.violations, "the server"
    found = [
        v for v in every if (ns.rule is None or v.rule == ns.rule) and (ns.side is None or violations_view.side(v) == ns.side)
    ]
    shown = found[-ns.last :] if ns.last else found
    text = violations_view.text(name, shown, len(found), who=who)
    if show.frontend():
        show.display(show.Html(violations_view.html(name, shown, len(found), who=who), text))
    else:
        print(text)
