"""How `conn.violations` reads: a text table for terminals and an HTML table for notebooks.

Pure functions of `Violation` records. Their messages quote server text (tool names,
cursors), so text goes through `one_line` (no control sequence survives) and HTML through
`esc`; a spec link is an `<a>` only when it is the spec's own https URL.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...base.plural import counted
from ...base.text import clip, esc, one_line
from ...protocol.frame_rules import Violation

SPEC = "https://modelcontextprotocol.io/specification/"


def side(v: Violation) -> str:
    """The side that broke the rule: "server", or "client" (a tap checks both)."""
    return str(getattr(v, "side", "server") or "server")


def summary(name: str, shown: int, total: int, who: str = "the server") -> str:
    if not total:
        sent = "every frame the server sent" if who == "the server" else f"every frame of {who}"
        return f"{name}: no violations: {sent} follows the spec"
    more = f" (the last {shown} of {total})" if shown < total else ""
    return f"{name}: {counted(total, 'violation')}{more}"


def _rule(v: Violation) -> str:
    return v.rule if side(v) == "server" else f"{v.rule} ({side(v)})"


def text(name: str, violations: Sequence[Violation], total: int, who: str = "the server") -> str:
    lines = [summary(name, len(violations), total, who)]
    for v in violations:
        lines.append(f"  #{v.index:<5} {one_line(v.method or '-'):<34} {_rule(v):<19} {one_line(v.where or '/')}")
        lines.append(f"         {clip(one_line(v.message), 160)}")
        if v.url:
            lines.append(f"         {v.url}")
    return "\n".join(lines)


LEFT = ' style="text-align:left;vertical-align:top"'  # each cell: JupyterLab right-aligns td


def _link(url: str | None) -> str:
    if not url or not url.startswith(SPEC):
        return ""
    section = url[len(SPEC) :]
    return f'<a href="{esc(url)}" target="_blank" rel="noopener">{esc(section)}</a>'


def html(name: str, violations: Sequence[Violation], total: int, who: str = "the server") -> str:
    head = "".join(f'<th style="text-align:left">{label}</th>' for label in ("#", "method", "rule", "where", "message", "spec"))
    rows = "".join(
        f"<tr><td{LEFT}>{v.index}</td><td{LEFT}>{esc(v.method or '-')}</td><td{LEFT}><b>{esc(_rule(v))}</b></td>"
        f"<td{LEFT}><code>{esc(v.where or '/')}</code></td>"
        f"<td{LEFT}>{esc(clip(v.message, 400))}</td><td{LEFT}>{_link(v.url)}</td></tr>"
        for v in violations
    )
    table = f'<table style="font-size:0.9em"><tr>{head}</tr>{rows}</table>' if violations else ""
    return f'<div class="mcp-violations"><b>{esc(summary(name, len(violations), total, who))}</b>{table}</div>'
