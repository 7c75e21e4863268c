"""Tab completion for the `%mcp` magics in IPython: a matcher (IPython 8.6+, matcher API v2) over `candidates`.

The rule kept here: this module only translates. IPython's context becomes a call to
`candidates.complete` (the text before the cursor and the user's namespace), and its
answer becomes IPython's completions; what may come next is decided there, never here. On
`%mcp` lines and inside a connection method's name the matcher suppresses every other
matcher, so no Python name is mixed in; a tool's keyword arguments come beside Python's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .candidates import complete

MATCHER_ID = "mcp_notebook.completion"


def matcher_for(shell: Any) -> Callable[[Any], dict[str, Any]]:
    """An IPython (8.6+) v2 matcher: ours alone on the lines above, silent everywhere else."""

    def mcp_notebook_matcher(context: Any) -> dict[str, Any]:
        answer = complete(context.text_until_cursor, shell.user_ns)
        if answer is None:
            return {"completions": [], "suppress": False}
        from IPython.core.completer import SimpleCompletion

        if not answer.alone:
            completions = [SimpleCompletion(text, type="param") for text in answer.candidates]
            return {"completions": completions, "matched_fragment": answer.fragment, "suppress": False}
        # IPython lets the other matchers speak when ours has nothing: the word as typed keeps them quiet.
        texts = answer.candidates or [answer.fragment]
        return {
            "completions": [SimpleCompletion(text, type="mcp") for text in texts],
            "matched_fragment": answer.fragment,
            "suppress": True,
        }

    mcp_notebook_matcher.matcher_api_version = 2  # type: ignore[attr-defined]
    mcp_notebook_matcher.matcher_priority = 100  # type: ignore[attr-defined]
    mcp_notebook_matcher.matcher_identifier = MATCHER_ID  # type: ignore[attr-defined]
    return mcp_notebook_matcher


def register(shell: Any) -> None:
    """Put our matcher first in the shell's completer (once, however often the extension loads)."""
    completer = getattr(shell, "Completer", None)
    if completer is None:
        return
    kept = [m for m in completer.custom_matchers if getattr(m, "matcher_identifier", None) != MATCHER_ID]
    completer.custom_matchers[:] = [matcher_for(shell), *kept]
