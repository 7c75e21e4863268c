"""The tap: watch any MCP client talk to any server, both sides checked, in the notebook.

- `records`: what a watcher saw, one record at a time (the contract between the watchers and
  the notebook; imports nothing of ours).
- `observer`: `SessionObserver`, the notebook's model of one tapped session (trace, both sides
  checked, health); `tracking` (era, version, requests in flight), `pings` (ping judgement),
  `health` (`TapHealth`) are its parts.
"""
