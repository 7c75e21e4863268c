"""`conn.violations`: every rule the server's frames broke, as plain records, and their rows.

The checking itself is the session's (`session.violations`, off the ping path); reading here
first waits until every frame received so far has been checked, so a list read right after
a call covers every frame that came before its answer. Front ends (`%mcp violations`) render
`rows`; nothing here draws.
"""

from __future__ import annotations

from typing import Any

from ...protocol.frame_rules import Violation
from ...session.session import Session

COLUMNS = ("index", "direction", "method", "where", "rule", "message", "url")


def violations(session: Session) -> list[Violation]:
    """Every rule the server's frames broke, oldest first (the newest 1000 kept): each a
    `Violation` with `index` (its trace entry's seq), `direction`, `method`, `where` (a JSON
    pointer into the frame), `rule`, `message` and `url` (the spec section, where one applies)."""
    found: list[Violation] = session.checker.violations()
    return found


def records(session: Session) -> list[dict[str, Any]]:
    """The violations as plain dicts (JSON-ready), oldest first."""
    return [violation.as_dict() for violation in violations(session)]
