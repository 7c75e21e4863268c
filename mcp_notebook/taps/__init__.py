"""The tap: watch any MCP client talk to any server, both sides checked, in the notebook.

- `records`: what a watcher saw, one record at a time (the contract between the watchers and
  the notebook; imports nothing of ours).
- `http_proxy`: `TapProxy`, the reverse proxy on 127.0.0.1 an HTTP client is pointed at (with
  `http_sessions`, what it records in which local session, and `http_sse`, event streams read
  and the HTTP+SSE endpoint rewritten); the upstream side is `transports.forward`.
"""
