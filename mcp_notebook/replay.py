"""`python -m mcp_notebook.replay PATH [--http] [--match params|method|order]`: play a cassette.

The program only: run it, do not import it. (`mcp_notebook.replay`, the function, starts it
and connects; see `mcp_notebook.cassette` for how a cassette is played.)
"""

from __future__ import annotations

from .cassette.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
