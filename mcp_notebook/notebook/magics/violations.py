"""`%mcp violations`: the rules the server's frames broke, on one connection.

A thin front end over `conn.violations` (`api.health.violations`): an HTML table in Jupyter
(the trace entry's seq, the method, the rule, a JSON pointer, the spec section), text
elsewhere.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ...protocol.frame_rules import RULES
from ..render import violations as violations_view
from .commands import arg, connection, connection_of, last, subcommand


def _display(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def _frontend() -> bool:
    from ..widgets.pump import has_widget_frontend

    return has_widget_frontend()


class _Html:
    def __init__(self, html: str, text: str) -> None:
        self._html, self._text = html, text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/html": self._html, "text/plain": self._text}


@subcommand(
    "violations",
    "the rules the server's frames broke: which frame, where, the rule, the spec section (connect --strict: fail on one)",
    connection(positional=True),
    arg("--rule", choices=RULES, help=f"only this rule: {', '.join(RULES)}"),
    last("how many of the newest (default: 50)", default=50),
)
def _violations(ns: Namespace) -> None:
    conn = connection_of(ns)
    found = [v for v in conn.violations if ns.rule is None or v.rule == ns.rule]
    shown = found[-ns.last :] if ns.last else found
    text = violations_view.text(conn.name, shown, len(found))
    if _frontend():
        _display(_Html(violations_view.html(conn.name, shown, len(found)), text))
    else:
        print(text)
