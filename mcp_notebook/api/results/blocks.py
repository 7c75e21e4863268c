"""Content blocks (of tool results, resources, prompt messages) as text and HTML, and the
part of a long result that its display shows.

A result keeps everything the server sent; its display shows the first `SHOWN_BLOCKS`
blocks, each text clipped to `SHOWN_CHARS` characters with a note of its length, and
says how many blocks it left out: a result of a million blocks or of 50 MB of text
displays in a moment instead of being copied into a page the size of the result. Media
stay whole (a clipped data URI would show nothing). Server text is escaped; images and
audio become data URIs only for image/* and audio/* MIME types.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...base.sizes import bounded, clipped_text
from ...base.text import esc

SHOWN_BLOCKS = 100  # content blocks (or resource contents) a result's display shows; the rest are counted
SHOWN_CHARS = 100_000  # characters of one block's text (or of structured content) a display shows


MIME = re.compile(r"^[\w.+-]+/[\w.+-]+$")


def pre(text: str, style: str = "") -> str:
    return f'<pre style="white-space:pre-wrap;{style}">{esc(text)}</pre>'


def data_uri(mime: Any, data: Any, family: str) -> str | None:
    if not (isinstance(mime, str) and MIME.match(mime) and mime.startswith(family + "/") and isinstance(data, str)):
        return None
    if not re.fullmatch(r"[A-Za-z0-9+/=\s]*", data):
        return None
    return f"data:{mime};base64,{data}"


def block_text(block: Any) -> str:
    """One content block as a line or so of text."""
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType', '?')}, {size} bytes]"
    if kind == "resource_link":
        return f"[resource link {block.get('name') or ''} {block.get('uri', '')}]".replace("  ", " ")
    if kind == "resource":
        res = block.get("resource") or {}
        if "text" in res:
            return f"[resource {res.get('uri', '')}]\n{res['text']}"
        return f"[resource {res.get('uri', '')} {res.get('mimeType', '')}, blob]"
    return json.dumps(block, default=str)


def block_html(block: Any) -> str:
    """One content block as HTML (server text escaped; media as data URIs of checked MIME types)."""
    if not isinstance(block, dict):
        return pre(str(block))
    kind = block.get("type")
    notes = block.get("annotations")
    note = f'<div style="color:#868e96;font-size:0.85em">annotations: {esc(json.dumps(notes))}</div>' if notes else ""
    if kind == "text":
        return pre(str(block.get("text", ""))) + note
    if kind == "image":
        uri = data_uri(block.get("mimeType"), block.get("data"), "image")
        return (f'<img src="{esc(uri)}" alt="image" style="max-width:100%"/>' if uri else pre(block_text(block))) + note
    if kind == "audio":
        uri = data_uri(block.get("mimeType"), block.get("data"), "audio")
        return (f'<audio controls src="{esc(uri)}"></audio>' if uri else pre(block_text(block))) + note
    if kind == "resource_link":
        uri = str(block.get("uri", ""))
        label = esc(block.get("title") or block.get("name") or uri)
        link = (
            f'<a href="{esc(uri)}" target="_blank" rel="noopener">{label}</a>'
            if uri.startswith(("http://", "https://"))
            else f"<code>{label}</code>"
        )
        desc = f" — {esc(block.get('description'))}" if block.get("description") else ""
        return f"<div>🔗 resource link: {link} <code>{esc(uri)}</code>{desc}</div>" + note
    if kind == "resource":
        res = block.get("resource") or {}
        body = pre(str(res["text"])) if "text" in res else f"<i>blob, {esc(res.get('mimeType', '?'))}</i>"
        return f"<div>📄 embedded resource <code>{esc(res.get('uri', ''))}</code>{body}</div>" + note
    return pre(json.dumps(block, indent=2, default=str))


def shown(blocks: list[Any], what: str = "content blocks", where: str = ".content") -> tuple[list[Any], str]:
    """The blocks a display shows (long texts clipped), and a note of those it leaves out ("" if none)."""
    kept = [_clipped(block) for block in blocks[:SHOWN_BLOCKS]]
    left = len(blocks) - len(kept)
    return kept, (f"… and {left:,} more {what} ({where} holds them all)" if left else "")


def _clipped(block: Any) -> Any:
    """`block`, or a copy whose long text (its own, or its embedded resource's) is clipped."""
    if not isinstance(block, dict):
        return block
    text = block.get("text")
    if isinstance(text, str) and len(text) > SHOWN_CHARS:
        return {**block, "text": clipped_text(text, SHOWN_CHARS)}
    resource = block.get("resource")
    if isinstance(resource, dict) and isinstance(resource.get("text"), str) and len(resource["text"]) > SHOWN_CHARS:
        return {**block, "resource": {**resource, "text": clipped_text(resource["text"], SHOWN_CHARS)}}
    return block


def shown_json(value: Any) -> str:
    """`value` as indented JSON, from a copy of it bounded to about `SHOWN_CHARS` characters."""
    return json.dumps(bounded(value, SHOWN_CHARS)[0], indent=2, default=str)
