"""The server log subcommands: `%mcp loglevel` (the least severe level the server sends) and `logs`
(its messages: a snapshot, `--live` a panel that follows new ones in Jupyter, `--save` JSON lines).
"""

from __future__ import annotations

from argparse import Namespace

from ...api.calls.progress import LOG_LEVELS
from ...base.plural import counted
from . import show
from .commands import LIVE, CommandError, arg, connection, connection_of, flag, last, save, subcommand


@subcommand(
    "loglevel",
    "the least severe server log level to receive (legacy: logging/setLevel; modern: sent with each request)",
    connection(),
    arg("level", choices=LOG_LEVELS, help="the least severe level to receive"),
)
def _loglevel(ns: Namespace) -> None:
    conn = connection_of(ns)
    conn.set_log_level(ns.level)
    if conn.rules.log_level_per_request:
        print(
            f"{conn.name}: server log level {ns.level}, sent with each request as _meta "
            "io.modelcontextprotocol/logLevel (2026-07-28 has no logging/setLevel)"
        )
    else:
        print(f"{conn.name}: server log level {ns.level} (logging/setLevel)")


@subcommand(
    "logs",
    "the server's log messages, those shown in a waiting cell marked (--live: a widget that follows new "
    "ones; --unrouted: only those no cell showed; --save: JSON lines)",
    connection(positional=True),
    LIVE,
    last("how many of the newest (default: 50; live 200; --save all kept)"),
    arg("--level", metavar="LEVEL", choices=LOG_LEVELS, help=f"the least severe level shown: {', '.join(LOG_LEVELS)}"),
    flag("--unrouted", help="only the messages no waiting cell showed"),
    save("log messages"),
)
def _logs(ns: Namespace) -> None:
    from ...api.display.panels import LOG_ROWS, logs_snapshot, write_jsonl

    conn = connection_of(ns)
    if ns.save:
        try:
            written = write_jsonl(conn.logs.records(last=ns.last, level=ns.level, unrouted_only=ns.unrouted), ns.save)
        except OSError as exc:
            raise CommandError(f"cannot write {ns.save}: {exc.strerror or exc}") from None
        print(f"saved {counted(written, 'log message')} to {ns.save}")
        return
    if ns.live and show.frontend():
        show.display(conn.logs.panel(level=ns.level, unrouted_only=ns.unrouted, rows=ns.last or LOG_ROWS))
        return
    text, html = logs_snapshot(conn, last=ns.last or 50, level=ns.level, unrouted_only=ns.unrouted)
    if show.frontend():
        show.display(show.Html(html, text))
        return
    if ns.live:
        print("(a live panel needs a Jupyter widget frontend; this is a snapshot)")
    print(text)
