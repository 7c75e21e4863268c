"""The doctor's era probe: the step that opens the real connection, and says what the server
answered to `server/discover` and what the client concluded from it (modern, or the legacy
handshake on a clean slate), read from that connection's own trace; and whether
`era="legacy"` would connect where the default does not.

The rule: the probe shown is the one a user's `connect()` sends, never a copy of it: this step
opens the connection (watching each session tried, a failed one's trace too) and the
handshake step after it reports how the opening went. The connection is registered under a
name of the doctor's own and closed when the diagnosis ends; a `era="legacy"` trial is closed
at once.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from ..api.connecting.connect import open_connection
from ..base.errors import McpNotebookError
from ..base.text import one_line
from ..session.era import LEGACY
from ..session.session import Session
from ..session.trace import TraceEntry
from .context import Context
from .report import Step

_numbers = itertools.count(1)


def era_probe(ctx: Context) -> Step:
    """Open the connection as `connect()` does; say what its era probe saw and concluded."""
    sessions: list[Session] = []
    options = ctx.options.replace(name=_name(), timeout=ctx.timeout)
    try:
        ctx.conn = open_connection(ctx.target, options, sessions.append)
    except McpNotebookError as exc:
        ctx.facts["connect_failure"] = exc
    if not sessions:
        return ctx.fail(f"the connection could not be set up: {ctx.facts.get('connect_failure')}")
    ctx.facts["legacy"] = _legacy(sessions[-1])
    probed = [session for session in sessions if _probe_sent(session.trace.entries())]
    if not probed:
        why = _era_notes(sessions[-1].trace.entries())
        return ctx.skip(f"not sent: {'; '.join(why) or 'the era is pinned'}")
    entries = probed[-1].trace.entries()
    answered, concluded = _answered(entries), _era_notes(entries)
    noise = [e.note for e in entries if e.kind == "probe-stderr" and e.note]
    heard = f"server/discover: {answered}" + (f" ({noise[0]})" if noise else "")
    verdict = next((e for e in reversed(entries) if e.kind == "era" and e.detail.get("era")), None)
    if verdict is None:
        failure = ctx.facts.get("connect_failure")
        return ctx.fail(f"{heard}; no verdict: {failure}", legacy_hint(ctx))
    step = f"{heard}; concluded: {'; '.join(concluded)}"
    if _legacy(probed[-1]) and "no answer to server/discover" in (verdict.note or ""):
        return ctx.warn(step, "era='legacy' skips the probe and its wait, for a server that never answers it")
    return ctx.ok(step)


def legacy_hint(ctx: Context) -> str:
    """When the connect failed short of the legacy handshake: era='legacy', if a trial with it
    connects; else nothing (the handshake itself failed, or the trial did too)."""
    if ctx.asked is LEGACY or ctx.facts.get("legacy"):
        return ""
    options = ctx.options.replace(name=_name(), timeout=ctx.timeout, era=LEGACY.name, protocol_version=None)
    try:
        trial = open_connection(ctx.target, options)
    except McpNotebookError:
        return ""
    info = trial.server_info or {}
    trial.close()
    return f"connect with era='legacy': a trial with it connected ({one_line(str(info.get('name', '?')))})"


def _legacy(session: Session) -> bool:
    """Whether the session settled on the legacy era (and so went as far as its handshake)."""
    return session.eras.settled and session.rules is LEGACY


def _name() -> str:
    return f"doctor-{os.getpid()}-probe-{next(_numbers)}"


def _probe_sent(entries: list[TraceEntry]) -> TraceEntry | None:
    return next((e for e in entries if e.direction == "out" and e.method == "server/discover" and e.note == "era probe"), None)


def _era_notes(entries: list[TraceEntry]) -> list[str]:
    return [e.note for e in entries if e.kind == "era" and e.note]


def _answered(entries: list[TraceEntry]) -> str:
    """What came back to the probe: its HTTP status, and its JSON-RPC answer if there was one."""
    probe = _probe_sent(entries)
    assert probe is not None
    after = entries[entries.index(probe) + 1 :]
    verdict = next((i for i, e in enumerate(after) if e.kind == "era"), len(after))
    after = after[:verdict]  # what came before the verdict: the probe's answer (its id may be wrong)
    said: list[str] = []
    status = next((e.detail for e in after if e.kind == "http" and e.detail.get("method") == "POST"), None)
    if status is not None:
        kind = str(status.get("content_type") or "no content type").partition(";")[0]
        said.append(f"HTTP {status.get('status')}, {kind}")
    answer = next((e.message for e in after if e.direction == "in" and isinstance(e.message, dict)), None)
    said.append(_answer(answer) if answer is not None else "no JSON-RPC answer" if said else "no answer")
    return ", ".join(said)


def _answer(message: dict[str, Any]) -> str:
    error = message.get("error")
    if isinstance(error, dict):
        return f"JSON-RPC error {error.get('code')}: {one_line(str(error.get('message', '')))[:160]}"
    result = message.get("result")
    versions = result.get("supportedVersions") if isinstance(result, dict) else None
    if isinstance(versions, list):
        return f"a DiscoverResult (versions {', '.join(map(str, versions))})"
    return "a result that is no DiscoverResult"
