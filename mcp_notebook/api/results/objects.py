"""Result objects for tools, resources and prompts, with rich notebook display.

They wrap the server's result dict (`.raw`, kept whole) and display as HTML in a notebook
and as text elsewhere, showing what `blocks` shows of a long one. Everything the server
wrote is escaped in HTML and stripped of escape sequences in text (`base.text.plain`: no
clipboard write or screen clear reaches a terminal); images and audio become data URIs only
for image/* and audio/* MIME types. Nothing here imports IPython.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ...base.errors import UsageError
from ...base.plural import counted
from ...base.public import public
from ...base.text import clip, clip_words, code_html, code_text, esc, plain, table_text
from . import app_meta
from .blocks import block_html, block_text, data_uri, pre, shown, shown_json


def _tabular(data: Any) -> list[dict[str, Any]] | None:
    """Rows if `data` looks like a table: a list of objects, or one key holding one."""
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        return data
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(data) == 1 and lists and _tabular(lists[0]) is not None:
            return lists[0]
        if all(not isinstance(v, (dict, list)) for v in data.values()):
            return [data]
    return None


def to_dataframe(data: Any) -> Any:
    """A pandas DataFrame of tabular data (pandas is optional)."""
    try:
        import pandas
    except ImportError:
        raise UsageError("to_dataframe() needs pandas, which is not installed (pip install pandas)") from None
    rows = _tabular(data)
    if rows is None:
        raise UsageError("this data is not tabular (expected a list of objects, or an object holding one)")
    return pandas.DataFrame(rows)


def _view(tool: dict[str, Any]) -> str:
    """MCP Apps: "app" for a tool with a view, "app only" for one only its app may call."""
    if app_meta.app_only(tool):
        return "app only"
    return "app" if app_meta.resource_uri(tool) else ""


class _Rich:
    """Shared display plumbing: subclasses give `_html()` and `_text()`; the text shown is `plain`."""

    def _html(self) -> str:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/html": self._html(), "text/plain": plain(self._text())}

    def __str__(self) -> str:
        return plain(self._text())


@public
class ToolResult(_Rich):
    """What `tools/call` returned: `.content`, `.text`, `.structured`, `.is_error`, `.raw`."""

    def __init__(self, name: str, raw: dict[str, Any]) -> None:
        self.name = name
        self.raw = raw
        self.app: Any = None  # an api.apps.methods.AppLink when the tool has a view (MCP Apps) to show

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs)
        return self.app.bundle(bundle) if self.app is not None else bundle

    @property
    def content(self) -> list[Any]:
        content = self.raw.get("content")
        return content if isinstance(content, list) else []

    @property
    def structured(self) -> Any:
        return self.raw.get("structuredContent")

    @property
    def is_error(self) -> bool:
        return bool(self.raw.get("isError"))

    @property
    def text(self) -> str:
        """The text blocks, joined by newlines."""
        return "\n".join(str(b.get("text", "")) for b in self.content if isinstance(b, dict) and b.get("type") == "text")

    def to_dataframe(self) -> Any:
        return to_dataframe(self.structured)

    def _html(self) -> str:
        style = (
            "border-left:4px solid #e03131;padding-left:6px"
            if self.is_error
            else "border-left:4px solid #2e9e44;padding-left:6px"
        )
        head = f"<b>{esc(self.name)}</b>" + (' <span style="color:#e03131">error</span>' if self.is_error else "")
        blocks, left_out = shown(self.content)
        body = "".join(block_html(b) for b in blocks) + (f"<div><i>{esc(left_out)}</i></div>" if left_out else "")
        if self.structured is not None:
            body += f"<details><summary>structuredContent</summary>{pre(shown_json(self.structured))}</details>"
        return f'<div class="mcp-result" style="{style}">{head}{body}</div>'

    def _text(self) -> str:
        lines = [f"{self.name}: error" if self.is_error else f"{self.name}:"]
        blocks, left_out = shown(self.content)
        lines += [block_text(b) for b in blocks] + ([left_out] if left_out else [])
        if self.structured is not None and not self.content:
            lines.append(shown_json(self.structured))
        return "\n".join(lines)

    def __repr__(self) -> str:
        blocks = shown(self.content)[0]  # not `.text`, which joins every block of a long result
        text = "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        return f"<ToolResult {self.name!r}{' error' if self.is_error else ''}: {clip(plain(text or self._text()), 60)!r}>"


@public
class ResourceResult(_Rich):
    """What `resources/read` returned: `.contents`, `.text`, `.blobs` (bytes), `.raw`."""

    def __init__(self, uri: str, raw: dict[str, Any]) -> None:
        self.uri = uri
        self.raw = raw

    @property
    def contents(self) -> list[dict[str, Any]]:
        return [c for c in self.raw.get("contents") or [] if isinstance(c, dict)]

    @property
    def text(self) -> str:
        return "\n".join(str(c["text"]) for c in self.contents if "text" in c)

    @property
    def blobs(self) -> list[bytes]:
        return [base64.b64decode(c["blob"]) for c in self.contents if isinstance(c.get("blob"), str)]

    def _html(self) -> str:
        parts = []
        contents, left_out = shown(self.contents, "contents", ".contents")
        for c in contents:
            head = f"<div><code>{esc(c.get('uri', self.uri))}</code> {esc(c.get('mimeType', ''))}</div>"
            uri = data_uri(c.get("mimeType"), c.get("blob"), "image")
            if "text" in c:
                parts.append(head + pre(str(c["text"]), "max-height:24em;overflow:auto"))
            elif uri:
                parts.append(head + f'<img src="{esc(uri)}" style="max-width:100%"/>')
            else:
                parts.append(head + f"<i>blob, {len(str(c.get('blob', ''))) * 3 // 4} bytes</i>")
        if left_out:
            parts.append(f"<div><i>{esc(left_out)}</i></div>")
        return '<div class="mcp-resource">' + "".join(parts) + "</div>"

    def _text(self) -> str:
        out = []
        contents, left_out = shown(self.contents, "contents", ".contents")
        for c in contents:
            out.append(f"[{c.get('uri', self.uri)} {c.get('mimeType', '')}]".replace(" ]", "]"))
            out.append(str(c["text"]) if "text" in c else f"(blob, {len(str(c.get('blob', ''))) * 3 // 4} bytes)")
        return "\n".join([*out, left_out] if left_out else out)

    def __repr__(self) -> str:
        return f"<ResourceResult {self.uri!r}: {len(self.contents)} part(s)>"


@public
class PromptResult(_Rich):
    """What `prompts/get` returned: `.messages`, `.description`, `.text`, `.raw`."""

    def __init__(self, name: str, raw: dict[str, Any]) -> None:
        self.name = name
        self.raw = raw

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [m for m in self.raw.get("messages") or [] if isinstance(m, dict)]

    @property
    def description(self) -> str | None:
        return self.raw.get("description")

    @property
    def text(self) -> str:
        return "\n".join(block_text(m.get("content")) for m in self.messages)

    def _html(self) -> str:
        desc = f"<div><i>{esc(self.description)}</i></div>" if self.description else ""
        rows = "".join(f"<div><b>{esc(m.get('role'))}</b>{block_html(m.get('content'))}</div>" for m in self.messages)
        return f'<div class="mcp-prompt"><b>{esc(self.name)}</b>{desc}{rows}</div>'

    def _text(self) -> str:
        return "\n".join(
            [f"{self.name}:" + (f" {self.description}" if self.description else "")]
            + [f"[{m.get('role')}] {block_text(m.get('content'))}" for m in self.messages]
        )

    def __repr__(self) -> str:
        return f"<PromptResult {self.name!r}: {len(self.messages)} message(s)>"


def arguments_summary(schema: Any) -> str:
    """`a: number*, b: string` from an input schema (* marks required)."""
    if not isinstance(schema, dict):
        return ""
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        kind = "|".join(kind) if isinstance(kind, list) else kind
        if isinstance(prop, dict) and prop.get("enum"):
            kind = "|".join(json.dumps(v) for v in prop["enum"])
        parts.append(f"{name}: {kind}{'*' if name in required else ''}")
    return ", ".join(parts)


BADGES = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}
BADGE_COLOURS = {"read-only": "#2f9e44", "destructive": "#e03131", "idempotent": "#1971c2", "open-world": "#f08c00"}


def tool_badges(tool: dict[str, Any]) -> list[str]:
    """The tool's annotation hints that are true, as badge words (read-only, destructive, ...)."""
    notes = tool.get("annotations") or {}
    return [BADGES[k] for k in BADGES if isinstance(notes, dict) and notes.get(k) is True]


def _annotations(tool: dict[str, Any]) -> str:
    return " ".join(f"[{badge}]" for badge in tool_badges(tool))


def _annotations_html(tool: dict[str, Any]) -> str:
    return " ".join(
        f'<span style="border:1px solid {BADGE_COLOURS[b]};color:{BADGE_COLOURS[b]};border-radius:3px;padding:0 3px;'
        f'font-size:0.85em">{esc(b)}</span>'
        for b in tool_badges(tool)
    )


def tool_output(tool: dict[str, Any]) -> str:
    """What the tool declares about its output: "schema" for an output schema (room for more marks)."""
    return " ".join(mark for mark, has in (("schema", isinstance(tool.get("outputSchema"), dict)),) if has)


KIND_WORDS = {
    "tools": ("tool", "tools"),
    "resources": ("resource", "resources"),
    "resourceTemplates": ("resource template", "resource templates"),
    "prompts": ("prompt", "prompts"),
}


@public
class Listing(list, _Rich):  # type: ignore[type-arg]
    """A list of tools, resources, templates or prompts (plain dicts) that displays as a table."""

    COLUMNS: dict[str, Sequence[tuple[str, Any]]] = {
        "tools": [
            ("name", lambda t: t.get("name")),
            ("title", lambda t: t.get("title") or ""),
            ("description", lambda t: clip_words(t.get("description"), 70)),
            ("arguments (* required)", lambda t: arguments_summary(t.get("inputSchema"))),
            ("annotations", _annotations),
            ("output", tool_output),
            ("view", _view),
        ],
        "resources": [
            ("name", lambda r: r.get("name")),
            ("uri", lambda r: r.get("uri")),
            ("mimeType", lambda r: r.get("mimeType") or ""),
            ("description", lambda r: clip_words(r.get("description"), 70)),
        ],
        "resourceTemplates": [
            ("name", lambda r: r.get("name")),
            ("uriTemplate", lambda r: r.get("uriTemplate")),
            ("mimeType", lambda r: r.get("mimeType") or ""),
            ("description", lambda r: clip_words(r.get("description"), 70)),
        ],
        "prompts": [
            ("name", lambda p: p.get("name")),
            ("title", lambda p: p.get("title") or ""),
            ("description", lambda p: clip_words(p.get("description"), 70)),
            (
                "arguments (* required)",
                lambda p: ", ".join(f"{a.get('name')}{'*' if a.get('required') else ''}" for a in p.get("arguments") or []),
            ),
        ],
    }

    HTML_CELLS: dict[str, dict[str, Any]] = {"tools": {"annotations": _annotations_html}}  # cells drawn, not just escaped
    # Names stay whole; long words elsewhere (an enum of levels, a URI) wrap anywhere, so the table fits the notebook.
    CELL_STYLES = dict.fromkeys(["name", "output", "view"], ";white-space:nowrap")
    CELL_STYLES |= dict.fromkeys(["arguments (* required)", "uri", "uriTemplate"], ";overflow-wrap:anywhere")
    CELL_STYLES["description"] = ";word-break:normal;overflow-wrap:break-word"  # prose wraps between words

    def __init__(self, kind: str, items: Iterable[dict[str, Any]], note: str = "") -> None:
        super().__init__(items)
        self.kind = kind
        self.note = note  # a line under the table (what a listing left out)

    KEY = "name"  # what names an item: `names()` lists it, `get()` finds an item by it

    def names(self) -> list[str]:
        return [str(item.get(self.KEY)) for item in self]

    def get(self, name: str) -> dict[str, Any] | None:
        return next((item for item in self if item.get(self.KEY) == name), None)

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        """The table's columns and rows; a column no item fills (no tool has a title) is left out."""
        columns = self.COLUMNS[self.kind]
        rows = [[str(fn(item) or "") for _, fn in columns] for item in self]
        kept = [i for i, (name, _) in enumerate(columns) if name == self.KEY or any(row[i] for row in rows)]
        return [columns[i][0] for i in kept], [[row[i] for i in kept] for row in rows]

    def _html(self) -> str:
        head, rows = self._rows()
        drawn = self.HTML_CELLS.get(self.kind, {})
        shown = {h: code_html if h == "description" else esc for h in head}  # descriptions' `code` as <code>
        cells = [
            [drawn[h](item) if h in drawn else shown[h](c) for h, c in zip(head, row, strict=True)]
            for item, row in zip(self, rows, strict=True)
        ]
        th = "".join(f'<th style="text-align:left">{esc(h)}</th>' for h in head)
        tds = [f'<td style="text-align:left{self.CELL_STYLES.get(h, "")}">' for h in head]
        body = "".join("<tr>" + "".join(f"{td}{c}</td>" for td, c in zip(tds, row, strict=True)) + "</tr>" for row in cells)
        note = f"; {esc(self.note)}" if self.note else ""
        return f'<table class="mcp-listing"><tr>{th}</tr>{body}</table><div>{esc(self._count())}{note}</div>'

    def _count(self) -> str:
        one, many = KIND_WORDS.get(self.kind, (self.kind, self.kind))
        return counted(len(self), one, many)

    def _text(self) -> str:
        if not self:
            return f"(no {self.kind})"
        head, rows = self._rows()
        rows = [[code_text(c) if h == "description" else c for h, c in zip(head, row, strict=True)] for row in rows]
        return table_text(head, [[clip_words(c, 60) for c in row] for row in rows]) + (f"\n{self.note}" if self.note else "")

    def __repr__(self) -> str:
        return plain(self._text())
