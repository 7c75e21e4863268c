"""A `Comparison`: what a live server answered differently from a cassette, field by field.

`differences()` walks a recorded and a live value together and yields a `Difference` at
each JSON pointer where they part: a changed value, a field or item only one side has.
Lists of named things (tools, prompts, resources, templates: objects with a unique `name`,
`uri` or `uriTemplate`) are matched by that name, not by place, so a new tool is one
difference, not a shifted list. Volatile fields are skipped: an `ignore` pattern is a key
name (matched at any depth) or a JSON pointer whose `*` matches any one segment (the
subtree under it is skipped). Server text is escaped in HTML and stripped in text.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from xml.etree import ElementTree

from ...base.public import public
from ...base.text import clip, esc, plain

# Fields that differ from run to run by nature: when, which session, which request.
VOLATILE: tuple[str, ...] = (
    "timestamp",
    "createdAt",
    "updatedAt",
    "lastModified",
    "lastUpdatedAt",
    "expiresAt",
    "sessionId",
    "requestId",
    "progressToken",
    "taskId",
    "io.modelcontextprotocol/subscriptionId",
    "io.modelcontextprotocol/related-task",
)
IDENTITY_KEYS = ("name", "uri", "uriTemplate")
SHOWN = 120  # characters of a value shown in a text or HTML row

LEFT = ' style="text-align:left;vertical-align:top"'  # each cell: JupyterLab right-aligns td


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()  # the side of a difference that has no such field or item


class Difference(NamedTuple):
    """One place where the live answer differs: the request's `method` (and `label`, e.g. the
    tool's name), `where` (a JSON pointer into the result, or the error), `recorded` and `live`
    (`ABSENT` where that side has nothing)."""

    method: str
    where: str
    recorded: Any
    live: Any
    label: str = ""

    def describe(self) -> str:
        where = plain(self.where or "/")  # a pointer through the server's keys
        return f"{self.label or self.method} {where}: recorded {shown(self.recorded)}, live {shown(self.live)}"


def shown(value: Any) -> str:
    text = repr(value) if value is ABSENT else json.dumps(value, ensure_ascii=False, default=str)
    return clip(plain(text), SHOWN)


class Ignore:
    """The volatile-field patterns: key names, and JSON pointers with `*` for any one segment."""

    def __init__(self, patterns: Collection[str]) -> None:
        self.keys = {p for p in patterns if not p.startswith("/")}
        self.pointers = [p.split("/")[1:] for p in patterns if p.startswith("/")]

    def skips(self, segments: list[str]) -> bool:
        if segments and segments[-1] in self.keys:
            return True
        return any(
            len(p) <= len(segments) and all(a in ("*", b) for a, b in zip(p, segments, strict=False)) for p in self.pointers
        )


def _pointer(segments: list[str]) -> str:
    return "".join("/" + s.replace("~", "~0").replace("/", "~1") for s in segments)


def _identity(items: list[Any]) -> str | None:
    """The key that names every item of a list of objects uniquely, if there is one."""
    for key in IDENTITY_KEYS:
        names = [item.get(key) for item in items if isinstance(item, dict)]
        if len(names) == len(items) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            return key
    return None


def differences(recorded: Any, live: Any, ignore: Ignore, segments: list[str] | None = None) -> Iterator[tuple[str, Any, Any]]:
    """(pointer, recorded, live) at each place the two JSON values differ."""
    segments = segments or []
    if ignore.skips(segments):
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in [*recorded, *(k for k in live if k not in recorded)]:
            yield from differences(recorded.get(key, ABSENT), live.get(key, ABSENT), ignore, [*segments, str(key)])
    elif isinstance(recorded, list) and isinstance(live, list):
        key = _identity(recorded) if recorded and live else None
        if key is not None and _identity(live) == key:
            live_by_name = {item[key]: (i, item) for i, item in enumerate(live)}
            recorded_names = {item[key] for item in recorded}
            for i, item in enumerate(recorded):
                yield from differences(item, live_by_name.get(item[key], (i, ABSENT))[1], ignore, [*segments, str(i)])
            for i, item in enumerate(live):
                if item[key] not in recorded_names:
                    yield from differences(ABSENT, item, ignore, [*segments, str(i)])
        else:
            for i in range(max(len(recorded), len(live))):
                pair = (recorded[i] if i < len(recorded) else ABSENT, live[i] if i < len(live) else ABSENT)
                yield from differences(*pair, ignore, [*segments, str(i)])
    elif recorded is not live and (type(recorded) is not type(live) or recorded != live):
        if not (isinstance(recorded, (int, float)) and isinstance(live, (int, float)) and recorded == live):
            yield _pointer(segments), recorded, live


@dataclass
class Check:
    """One recorded request asked again: its method, a label, and what differed."""

    method: str
    label: str
    differences: list[Difference] = field(default_factory=list)


@public
@dataclass
class Comparison:
    """What `mcp_notebook.compare()` found: `ok` when the live server answered every recorded
    request as recorded; `differences` otherwise, each with `method`, `where` (a JSON pointer),
    `recorded` and `live`. `to_junit()` writes a JUnit-style summary (one test case per request)."""

    cassette: str
    target: str
    checks: list[Check] = field(default_factory=list)
    ignored: tuple[str, ...] = VOLATILE

    @property
    def differences(self) -> list[Difference]:
        return [d for check in self.checks for d in check.differences]

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        found = self.differences
        verdict = "no difference" if not found else f"{len(found)} difference{'s' * (len(found) != 1)}"
        return f"{len(self.checks)} recorded request{'s' * (len(self.checks) != 1)} asked again: {verdict}"

    def __str__(self) -> str:
        lines = [f"compare {plain(self.cassette)} with {plain(self.target)}: {self.summary()}"]
        lines += [f"  {d.describe()}" for d in self.differences]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Comparison {'ok' if self.ok else 'differs'}: {self.summary()}>"

    def _repr_html_(self) -> str:
        head = f"<p><b>compare</b> {esc(self.cassette)} with {esc(self.target)}: {esc(self.summary())}</p>"
        if self.ok:
            return head
        rows = "".join(
            f"<tr><td{LEFT}>{esc(d.label or d.method)}</td><td{LEFT}><code>{esc(d.where or '/')}</code></td>"
            f"<td{LEFT}>{esc(shown(d.recorded))}</td><td{LEFT}>{esc(shown(d.live))}</td></tr>"
            for d in self.differences
        )
        labels = "".join(f"<th{LEFT}>{label}</th>" for label in ("request", "where", "recorded", "live"))
        return f"{head}<table><tr>{labels}</tr>{rows}</table>"

    def to_junit(self, path: Any = None) -> str:
        """A JUnit-style XML summary (and written to `path` if given): a test case per request asked."""
        suite = ElementTree.Element(
            "testsuite",
            name=f"mcp-notebook compare {self.cassette}",
            tests=str(len(self.checks)),
            failures=str(sum(1 for check in self.checks if check.differences)),
            errors="0",
        )
        for number, check in enumerate(self.checks, 1):
            case = ElementTree.SubElement(suite, "testcase", classname=self.cassette, name=f"{number:03d} {check.label}")
            if check.differences:
                failure = ElementTree.SubElement(case, "failure", message=f"{len(check.differences)} difference(s)")
                failure.text = "\n".join(d.describe() for d in check.differences)
        text = ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)
        if path is not None:
            with open(path, "w", encoding="utf-8") as out:
                out.write(text + "\n")
        return text
