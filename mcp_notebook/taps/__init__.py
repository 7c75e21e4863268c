"""The tap: watch any MCP client talk to any server, both sides checked, in the notebook.

- `tap`: `mcp_notebook.tap(NAME)` and the `Tap` (shown by `tap_view`; open ones by name in
  `registry`), with `listener` (the socket relays stream records to), `sessions` (one
  `observer.SessionObserver` per tapped session, each record fed once) and `paste` (the
  entries to paste into each client's configuration).
- `records`: what a watcher saw, one record at a time (the contract between the watchers and
  the notebook; imports nothing of ours).
- `observer`: `SessionObserver`, the notebook's model of one tapped session (trace, both sides
  checked, health); `tracking` (era, version, requests in flight), `pings` (ping judgement),
  `health` (`TapHealth`) are its parts.
- `relay`: the stdio relay (`python -m mcp_notebook.tap -- COMMAND`): bytes both ways unchanged,
  with `recorder` making the records off the relayed path, `feed` streaming them to the notebook
  watching the name (never waited on) and `recording` keeping them on disk, bounded.
- `rendezvous`: where relays and notebooks meet: a private per-user directory, a socket per name.
- `http_proxy`: `TapProxy`, the reverse proxy on 127.0.0.1 an HTTP client is pointed at (with
  `http_sessions`, what it records in which local session, and `http_sse`, event streams read
  and the HTTP+SSE endpoint rewritten); the upstream side is `transports.forward`.
"""
