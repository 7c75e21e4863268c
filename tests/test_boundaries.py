"""Two rules of the session layer, checked on the source: it is the only one that drives its
threading protocol, and the era's differences are asked of its `Era` strategy.

- Outside `session/`, no module calls the session's wire primitives (`send_here`, `launch`,
  `abandon`, `new_request`, `round_trip`), reaches for its locks (the outbox's, the
  requests table's) or imports its request table: a caller starts a call with
  `Session.call` and waits on, awaits or cancels the `PendingCall` it returns.
- Outside the era modules (`session/era.py`, the negotiator `session/negotiation.py`), no module
  compares an era to its name ("legacy", "modern", or "auto" beside an era): it asks the
  strategy (`session.rules.pings`, `.tasks`, ...) or parses an option with `era_named`.

The demo server is exempt from both: it is a separate program, the server's side, with modes
of its own ("both").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_notebook"
SESSION = PACKAGE / "session"
ERA_MODULES = {SESSION / "era.py", SESSION / "negotiation.py"}
EXEMPT = PACKAGE / "demo_server"

PRIMITIVES = {"send_here", "_send_here", "launch", "abandon", "new_request", "round_trip", "take_waited", "settle"}
LOCKS = {"_settling", "_ending", "_done", "_callbacks", "waker"}
PRIVATE_MODULES = {"mcp_notebook.session.requests", "mcp_notebook.session.outbox", "mcp_notebook.session.inbound"}
ERA_NAMES = {"legacy", "modern"}


def _modules(*, outside: Path, exempt: set[Path] = frozenset()) -> list[Path]:  # type: ignore[assignment]
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(outside) and not path.is_relative_to(EXEMPT) and path not in exempt
    ]


def _imported(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)[: -node.level]
    return ".".join([*parts, *([node.module] if node.module else [])])


def session_internals_used(path: Path, source: str | None = None) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Attribute) and (node.attr in PRIMITIVES or node.attr in LOCKS):
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "lock" and "outbox" in ast.unparse(node.value):
            found.append(f"{path.name}:{node.lineno}: the outbox's lock")
        elif isinstance(node, ast.ImportFrom) and _imported(path, node) in PRIVATE_MODULES:
            found.append(f"{path.name}:{node.lineno}: imports {_imported(path, node)}")
    return found


def era_name_comparisons(path: Path, source: str | None = None) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if not isinstance(node, ast.Compare):
            continue
        names: set[str] = set()
        for part in [node.left, *node.comparators]:
            elements = part.elts if isinstance(part, (ast.Tuple, ast.List, ast.Set)) else [part]
            names |= {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        text = ast.unparse(node)
        if names & ERA_NAMES or ("auto" in names and "era" in text):
            found.append(f"{path.name}:{node.lineno}: {text}")
    return found


@pytest.mark.parametrize("path", _modules(outside=SESSION), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_session_drives_its_requests(path: Path) -> None:
    assert session_internals_used(path) == []


@pytest.mark.parametrize(
    "path", _modules(outside=PACKAGE / "nowhere", exempt=ERA_MODULES), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_era_is_told_by_its_name_outside_the_era_modules(path: Path) -> None:
    assert era_name_comparisons(path) == []


def test_the_checks_catch_what_they_forbid() -> None:
    """Each rule finds the thing it forbids (so an empty list above means something)."""
    where = PACKAGE / "api" / "some_module.py"  # never written: where the source would sit
    source = (
        "from ..session.requests import InFlight\n"
        "def f(session, pending):\n"
        "    session.send_here(pending)\n"
        "    session.runtime.call_soon(session.launch, pending)\n"
        "    session.abandon(pending, None, '')\n"
        "    with session.outbox.lock:\n"
        "        pass\n"
        "    return session.era == 'modern' or era not in ('auto', 'x')\n"
    )
    used = session_internals_used(where, source)
    compared = era_name_comparisons(where, source)
    assert len(used) == 5, used
    assert len(compared) == 2, compared
