"""Pictures drawn as SVG from plain data: sequence diagrams, round-trip histograms, sparklines.

The data comes from the API (`api.display.diagram`); this module only draws. Every label that came
from a server goes through `esc` (`base.text`) before it lands in the markup, and only our
own numbers and colours reach an attribute. The SVG is inline and self-contained (no
script, no external font or stylesheet), so it renders the same in a live notebook, a saved
one and an nbconvert HTML export.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...api.display.diagram import CLIENT, Bin, Diagram, Step, histogram
from ...base.text import clip, esc
from ...session.health_view import STATE_COLOURS

ROW = 20  # pixels a row of the diagram takes
TOP = 34  # the lane heads
TIME_X = 6  # the time column
CLIENT_X = 92
SERVER_X = 392
EVENT_X = 420  # transport events are written to the right of the server's lane
WIDTH = 760
EVENT_CLIP = 50  # characters of an event's label shown (all of it on hover)
FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px"
COLOURS = {
    "ping": "#1c7ed6",
    "pong": "#2e9e44",
    "error": "#e67700",
    "invalid": "#e03131",
    "event": "#868e96",
    "": "#343a40",
}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 1 else f"{seconds:.3f} s"


def _arrow(step: Step, y: float) -> str:
    colour = COLOURS.get(step.flavour, COLOURS[""])
    rightward = step.source == CLIENT
    x1, x2 = (CLIENT_X, SERVER_X) if rightward else (SERVER_X, CLIENT_X)
    tip = x2 - 7 if rightward else x2 + 7
    dash = ' stroke-dasharray="4 3"' if step.kind in ("response", "error") else ""
    label_x = (CLIENT_X + SERVER_X) / 2
    latency = f" · {_ms(step.latency)}" if step.latency is not None else ""
    return (
        f'<line x1="{x1}" y1="{y}" x2="{tip}" y2="{y}" stroke="{colour}" stroke-width="1.4"{dash}/>'
        f'<polygon points="{x2},{y} {tip},{y - 4} {tip},{y + 4}" fill="{colour}"/>'
        f'<text x="{label_x}" y="{y - 4}" text-anchor="middle" fill="{colour}">'
        f"<title>#{step.seq} {esc(step.kind)}, {step.size} bytes</title>{esc(step.label)}{esc(latency)}</text>"
    )


def _event(step: Step, y: float) -> str:
    state = step.label.split(":", 1)[0].removeprefix("state ") if step.kind == "state" else ""
    colour = STATE_COLOURS.get(state, COLOURS["event"])
    weight = ' font-weight="bold"' if state else ""
    return (
        f'<circle cx="{SERVER_X + 12}" cy="{y - 3}" r="3" fill="{colour}"/>'
        f'<text x="{EVENT_X}" y="{y}" fill="{colour}"{weight}><title>{esc(step.label)}</title>'
        f"{esc(clip(step.label, EVENT_CLIP))}</text>"
    )


def _joins(steps: Sequence[Step], rows: Mapping[int, float]) -> str:
    """A bracket beside the asker's lane from each request to its reply."""
    parts = []
    for step in steps:
        if step.reply_to is None or step.reply_to not in rows:
            continue
        top, bottom = rows[step.reply_to], rows[step.seq]
        asked_by_client = step.source != CLIENT  # the reply comes back to the asker
        x = CLIENT_X - 8 if asked_by_client else SERVER_X + 8
        tick = 4 if asked_by_client else -4
        colour = COLOURS.get(step.flavour, "#adb5bd") if step.flavour == "pong" else "#adb5bd"
        parts.append(
            f'<polyline points="{x + tick},{top} {x},{top} {x},{bottom} {x + tick},{bottom}" fill="none" '
            f'stroke="{colour}" stroke-width="1"/>'
        )
    return "".join(parts)


def diagram_svg(diagram: Diagram) -> str:
    """The sequence diagram: time down the left, the client's and the server's lanes, an arrow
    a frame (replies dashed, bracketed to their requests), events to the right."""
    steps = diagram.steps
    height = TOP + ROW * max(1, len(steps)) + 12
    rows = {s.seq: TOP + ROW * (i + 1) - 6 for i, s in enumerate(steps)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mcp-diagram" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" style="{FONT};background:#fff">',
        f'<text x="{TIME_X}" y="14" fill="#868e96">ms</text>',
        f'<text x="{CLIENT_X}" y="14" text-anchor="middle" font-weight="bold">client</text>',
        f'<text x="{SERVER_X}" y="14" text-anchor="middle" font-weight="bold">server</text>',
        f'<text x="{EVENT_X}" y="14" fill="#868e96">events</text>',
    ]
    for x in (CLIENT_X, SERVER_X):
        parts.append(f'<line x1="{x}" y1="{TOP - 14}" x2="{x}" y2="{height - 4}" stroke="#ced4da" stroke-width="2"/>')
    parts.append(_joins(steps, rows))
    for step in steps:
        y = rows[step.seq]
        parts.append(f'<text x="{TIME_X}" y="{y}" fill="#868e96">{step.at * 1000:.1f}</text>')
        parts.append(_event(step, y) if step.is_event else _arrow(step, y))
    if not steps:
        parts.append(f'<text x="{CLIENT_X}" y="{TOP + 8}" fill="#868e96">(no matching trace entries)</text>')
    parts.append("</svg>")
    return "".join(parts)


def diagram_html(diagram: Diagram) -> str:
    """The diagram with its caption, scrollable when tall."""
    return (
        f'<div class="mcp-diagram-box" style="max-height:40em;overflow:auto">'
        f'<div style="font-family:monospace;font-size:0.85em;color:#495057;white-space:nowrap">{esc(diagram.caption())}</div>'
        f"{diagram_svg(diagram)}</div>"
    )


def diagram_bundle(diagram: Diagram) -> dict[str, str]:
    """What a notebook displays: the picture, with its text beside it for terminals and search."""
    return {"image/svg+xml": diagram_svg(diagram), "text/html": diagram_html(diagram), "text/plain": diagram.text()}


# ----- round trips -----


def histogram_svg(values: Sequence[float], width: int = 240, height: int = 64, bins: int = 12) -> str:
    """Bars of how many round trips (seconds) fell in each range, with the range and the tallest count."""
    counts: list[Bin] = histogram(values, bins)
    if not counts:
        return ""
    axis = 14
    tallest = max(b.count for b in counts)
    bar = width / len(counts)
    bars = "".join(
        f'<rect x="{i * bar + 1:.1f}" y="{height - axis - (b.count / tallest) * (height - axis - 12):.1f}" '
        f'width="{max(1.0, bar - 2):.1f}" height="{(b.count / tallest) * (height - axis - 12):.1f}" fill="#74c0fc">'
        f"<title>{_ms(b.low)} – {_ms(b.high)}: {b.count}</title></rect>"
        for i, b in enumerate(counts)
    )
    low, high = counts[0].low, counts[-1].high
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mcp-histogram" width="{width}" height="{height}" '
        f'style="{FONT};vertical-align:middle">{bars}'
        f'<line x1="0" y1="{height - axis}" x2="{width}" y2="{height - axis}" stroke="#adb5bd"/>'
        f'<text x="0" y="{height - 2}" fill="#495057">{_ms(low)}</text>'
        f'<text x="{width}" y="{height - 2}" text-anchor="end" fill="#495057">{_ms(high)}</text>'
        f'<text x="0" y="9" fill="#868e96">tallest bar: {tallest} of {len(values)}</text></svg>'
    )


def spark_svg(values: Sequence[float], width: int = 160, height: int = 28) -> str:
    """A sparkline of round trips (seconds) with its scale: the lowest and highest value at the side."""
    values = [float(v) for v in values]
    if len(values) < 2:
        return f'<svg width="{width}" height="{height}"></svg>'
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    plot = width - 70
    step = plot / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{height - 3 - (v - low) / span * (height - 6):.1f}" for i, v in enumerate(values))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mcp-spark" width="{width}" height="{height}" '
        f'style="{FONT};vertical-align:middle">'
        f'<polyline fill="none" stroke="#1c7ed6" stroke-width="1.5" points="{points}"/>'
        f'<text x="{plot + 4}" y="10" fill="#495057">{_ms(high)}</text>'
        f'<text x="{plot + 4}" y="{height - 2}" fill="#495057">{_ms(low)}</text></svg>'
    )
