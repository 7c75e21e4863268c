"""The tap: watch any MCP client talk to any server, both sides checked, in the notebook.

The notebook's side is this folder's modules: `tap` (`mcp_notebook.tap(NAME)` and the `Tap`,
shown by `tap_view`, open ones by name in `registry`), `listener` (the socket relays stream
records to), `sessions` (one `observing.SessionObserver` per tapped session, each record fed
once) and `paste` (the entries to paste into each client's configuration). Below them:

- `wire`: what relays and notebooks share (records, the rendezvous, the on-disk recording).
- `relay`: the stdio relay, a program of its own on `wire` and the base.
- `proxy`: the HTTP reverse proxy, in the notebook's process.
- `observing`: one tapped session's model: its trace, both sides checked, the ping judgement, health.
"""
