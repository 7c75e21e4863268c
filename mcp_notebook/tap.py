"""`python -m mcp_notebook.tap [--name NAME] -- COMMAND ARGS...`: the relay a client runs instead
of a server's command, so a notebook can watch the session (`mcp_notebook.taps.relay.main`).

Run only as a program, never imported: a module `mcp_notebook.tap` would shadow the function
`mcp_notebook.tap()` that opens a tap in the notebook.
"""

from __future__ import annotations

if __name__ == "__main__":
    import sys

    from mcp_notebook.taps.relay.main import main

    sys.exit(main(sys.argv[1:]))
else:  # pragma: no cover - a mistaken import says what to use instead
    raise ImportError(
        "mcp_notebook.tap is the relay's command (python -m mcp_notebook.tap); in Python use mcp_notebook.tap(NAME)"
    )
