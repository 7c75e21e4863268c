"""The stdio relay, its own small program (`python -m mcp_notebook.tap -- COMMAND`): `main` relays
bytes both ways unchanged, `recorder` makes the records off the relayed path, `feed` streams them
to the notebook watching the name without ever waiting on it. It stands on `taps.wire`, the base
and the transports' reaper (so the server never outlives it).
"""
