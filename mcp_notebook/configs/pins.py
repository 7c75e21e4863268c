"""Pinned tool definitions: what a server's tools looked like the first time it was seen.

A server that changes a tool's description after the user trusted it can steer whoever reads
that description; so the first listing of a server's tools is pinned (each tool's name,
description, input and output schemas and annotations, and a fingerprint of them) in
`tool-pins.json` in the user data directory, keyed by the server's configured name or its
command line or URL (credentials replaced). Later listings are compared with the pin:
`ToolsDiff` says which tools were added, removed or changed, and in which fields.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..transports.urls import redact_url
from . import store
from .entries import redact_args

FILE = "tool-pins.json"
FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")


def server_key(*, config_name: str | None = None, target: str | Sequence[str] | None = None) -> str:
    """What a pin belongs to: `config:NAME`, `url:URL` or `command:ARGV` (credentials replaced)."""
    if config_name is not None:
        return f"config:{config_name}"
    if isinstance(target, str) and target.strip().lower().startswith(("http://", "https://")):
        return f"url:{redact_url(target.strip())}"
    if isinstance(target, str):  # a command line as shown (not necessarily shell-quoted)
        return f"command:{' '.join(redact_args(target.split()))}"
    return f"command:{shlex.join(redact_args([str(a) for a in target or ()]))}"


def pinned_fields(tool: dict[str, Any]) -> dict[str, Any]:
    return {name: tool.get(name) for name in FIELDS}


def fingerprint(tool: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(pinned_fields(tool), sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Change:
    """One changed tool: the fields that differ, and each field's old and new value."""

    name: str
    fields: tuple[str, ...]
    old: dict[str, Any]
    new: dict[str, Any]


@dataclass(frozen=True)
class ToolsDiff:
    """How a server's tools differ from their pin."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[Change, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self) -> str:
        """One line: `1 changed (echo: description), 1 added (x), 0 removed`."""
        parts = []
        if self.changed:
            each = ", ".join(c.name + ": " + "/".join(c.fields) for c in self.changed)
            parts.append(f"{len(self.changed)} changed ({each})")
        if self.added:
            parts.append(f"{len(self.added)} added ({', '.join(self.added)})")
        if self.removed:
            parts.append(f"{len(self.removed)} removed ({', '.join(self.removed)})")
        return "; ".join(parts) or "no change"

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": {c.name: list(c.fields) for c in self.changed},
        }


def pinned(key: str) -> dict[str, Any] | None:
    """The pin of `key`: {"pinned_at": ..., "tools": {name: {"fingerprint", "definition"}}}, or None."""
    record = store.load(FILE).get(key)
    return record if isinstance(record, dict) and isinstance(record.get("tools"), dict) else None


def pin(key: str, tools: Iterable[dict[str, Any]]) -> None:
    """Pin these tool definitions for `key`, replacing any earlier pin."""
    record = record_of(tools)

    def change(data: dict[str, Any]) -> None:
        data[key] = record

    store.update(FILE, change)


def record_of(tools: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A pin record of these tool definitions (what `pin` stores; `compare` takes it)."""
    return {
        "pinned_at": time.time(),
        "tools": {str(t.get("name")): {"fingerprint": fingerprint(t), "definition": pinned_fields(t)} for t in tools},
    }


def compare(record: dict[str, Any], tools: Iterable[dict[str, Any]]) -> ToolsDiff:
    """How `tools` differ from a pin record."""
    old: dict[str, Any] = record.get("tools") or {}
    new = {str(t.get("name")): t for t in tools}
    changed = []
    for name in sorted(set(old) & set(new)):
        if old[name].get("fingerprint") == fingerprint(new[name]):
            continue
        before = old[name].get("definition") or {}
        after = pinned_fields(new[name])
        fields = tuple(f for f in FIELDS if json.dumps(before.get(f), sort_keys=True) != json.dumps(after.get(f), sort_keys=True))
        changed.append(Change(name, fields or ("definition",), before, after))
    return ToolsDiff(tuple(sorted(set(new) - set(old))), tuple(sorted(set(old) - set(new))), tuple(changed))
