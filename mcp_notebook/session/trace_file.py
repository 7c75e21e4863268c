"""The header line of a trace saved as JSON lines, which makes the file a cassette.

The first line says what the file is (format and its version), which protocol version and
era the session spoke, who wrote it and when, and that secrets were redacted before anything
was recorded. Readers recognise it by its `format` key and skip it; files without one (from
before the header existed) still read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..base.about import CLIENT_NAME, TRACE_FORMAT, TRACE_FORMAT_VERSION, __version__

REDACTION_NOTE = (
    'Secrets registered with the connection (tokens, passwords, credential headers) were replaced by "[redacted]" '
    "as each entry was recorded: they are not in this file."
)
MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def header(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The header for a file of these records: the protocol version and era read from their frames."""
    version, era = _negotiated(rows)
    return {
        "format": TRACE_FORMAT,
        "formatVersion": TRACE_FORMAT_VERSION,
        "protocolVersion": version,
        "era": era,
        "writer": f"{CLIENT_NAME} {__version__}",
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "redaction": REDACTION_NOTE,
    }


def is_header(row: Any) -> bool:
    return isinstance(row, dict) and row.get("format") == TRACE_FORMAT


def _negotiated(rows: Iterable[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(version, era): an initialize result's version (legacy), else the first modern request's `_meta` one."""
    asked_initialize: set[Any] = set()
    for row in rows:
        message = row.get("message")
        if not isinstance(message, dict) or row.get("direction") not in ("in", "out"):
            continue
        if row["direction"] == "out" and message.get("method") == "initialize":
            asked_initialize.add(repr(message.get("id")))
        elif row["direction"] == "in" and repr(message.get("id")) in asked_initialize:
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                return result["protocolVersion"], "legacy"
        elif row["direction"] == "out" and row.get("kind") == "request":
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            version = meta.get(MODERN_VERSION_KEY) if isinstance(meta, dict) else None
            if isinstance(version, str) and message.get("method") != "server/discover":
                return version, "modern"
    return None, None
