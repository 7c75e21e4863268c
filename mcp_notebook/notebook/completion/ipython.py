"""Tab completion for the `%mcp` magics in IPython: a matcher (IPython 8.6+, matcher API v2) over `candidates`.

The rule kept here: this module only translates. IPython's context becomes a call to
`candidates.complete` (the text before the cursor and the user's namespace), and its
answer becomes IPython's completions; what may come next is decided there, never here. On
`%mcp` lines and inside a connection method's name the matcher suppresses every other
matcher, so no Python name is mixed in, and offers nothing (never a blank entry) when it has
nothing; a tool's keyword arguments come first, Python's names after them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .candidates import Answer, complete

MATCHER_ID = "mcp_notebook.completion"


class _Nothing:
    """No completions that IPython still counts as some: it lets a matcher suppress the others
    only when `len(completions)` is not 0, and our "nothing to offer" must keep them quiet too."""

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[Any]:
        return iter(())


def _beside_python(shell: Any, context: Any, answer: Answer) -> dict[str, Any]:
    """The tool's arguments first, then what IPython's own matchers offer there (the called
    method's keywords, Python names): Jedi would list its ~350 names before any of ours."""
    from IPython.core.completer import SimpleCompletion

    ours = [SimpleCompletion(text, type="param") for text in answer.candidates]
    python: list[Any] = []
    for name in ("python_func_kw_matcher", "python_matcher"):
        try:
            found = list(getattr(shell.Completer, name)(context)["completions"])
        except Exception:  # noqa: BLE001 - Python's names are a courtesy; ours stand alone
            continue
        python += sorted(found, key=lambda c: c.text) if name == "python_func_kw_matcher" else found
    seen = {c.text for c in ours}
    rest = []
    for completion in python:
        if completion.text not in seen:
            seen.add(completion.text)
            rest.append(completion)
    return {"completions": ours + rest, "matched_fragment": answer.fragment, "suppress": True, "ordered": True}


def matcher_for(shell: Any) -> Callable[[Any], dict[str, Any]]:
    """An IPython (8.6+) v2 matcher: ours alone on the lines above, silent everywhere else."""

    def mcp_notebook_matcher(context: Any) -> dict[str, Any]:
        answer = complete(context.text_until_cursor, shell.user_ns)
        if answer is None:
            return {"completions": [], "suppress": False}
        from IPython.core.completer import SimpleCompletion

        if not answer.alone:
            return _beside_python(shell, context, answer)
        completions: Any = [SimpleCompletion(text, type="mcp") for text in answer.candidates] or _Nothing()
        return {"completions": completions, "matched_fragment": answer.fragment, "suppress": True}

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
