"""Reading a server's stderr for what went wrong: the one line that says it, and whether our
era probe is to blame.

A server that fails to start leaves a traceback or a stack trace, whose last lines (frame
addresses, `Node.js v20`) say nothing; the line a user can act on is Python's exception line
(the last traceback's) or Node's `Error: Cannot find module ...`. Plain functions of the
lines, which come already decoded; what they return is on one line, with no control sequence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .text import one_line

TRACEBACK = "Traceback (most recent call last):"
# `ModuleNotFoundError: No module named 'x'`, `Error: Cannot find module '/x.js'`, `json.decoder.JSONDecodeError: ...`
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]*(?:Error|Exception|Exit)(?::|$)")
# What a line of a program's complaint often says, when no exception line is there.
_COMPLAINT = re.compile(
    r"\b(?:error|fatal|panic|failed|cannot|can't|could not|not found|no such|denied|refused|invalid|missing)\b", re.IGNORECASE
)
# An era probe that killed a server tends to leave its method's name, or a word about methods.
_ABOUT_THE_PROBE = re.compile(r"server/discover|\bdiscover\b|\bmethod\b", re.IGNORECASE)


def error_line(lines: Sequence[str]) -> str | None:
    """The line of `lines` that says what went wrong, or None if none does."""
    stripped = [one_line(line) for line in lines]
    starts = [i for i, line in enumerate(stripped) if line == TRACEBACK]
    if starts:  # Python: the exception line of the last traceback (the one that ended it)
        raw = lines[starts[-1] + 1 :]
        for line, text in zip(raw, stripped[starts[-1] + 1 :], strict=True):
            if text and not line[:1].isspace() and _EXCEPTION.match(text):
                return text
    for pattern in (_EXCEPTION, _COMPLAINT):
        for text in stripped:
            if text and not text.startswith("at ") and pattern.search(text):
                return text
    return None


def blames_the_probe(lines: Sequence[str]) -> bool:
    """Whether a server that exited during the era probe may have exited because of it: it said
    nothing we can read as an error, or what it said is about the probe (its method, or methods).
    A server that complains of something else (a missing module, a bad option) failed to start."""
    found = error_line(lines)
    return found is None or _ABOUT_THE_PROBE.search(found) is not None


def quoted(lines: Sequence[str], last: int = 5) -> str:
    """The part of stderr worth putting in a one-line error: its error line, or else its last lines."""
    found = error_line(lines)
    if found is not None:
        return f": {found}"
    tail = [text for text in (one_line(line) for line in lines[-last:]) if text]
    return "; its last stderr lines: " + " | ".join(tail) if tail else ""
