"""Cassettes: saved sessions (`Trace.to_jsonl`) read back as what a client asked and what the
server did, and a server that plays them back (`python -m mcp_notebook.replay PATH`).

A separate program like `demo_server`, on which it stands (its stdio and HTTP framing), with
`base` and `protocol`: it imports nothing of the client. `tape` reads a file, `matching`
finds the recorded exchange for a live request, `player` answers one, `stdio` and `http`
serve it, `cli` is the command line.
"""

from __future__ import annotations

from .matching import MATCH_MODES
from .tape import CassetteError, Exchange, Tape, load

__all__ = ["MATCH_MODES", "CassetteError", "Exchange", "Tape", "load"]
