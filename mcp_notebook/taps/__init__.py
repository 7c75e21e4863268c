"""The tap: watch any MCP client talk to any server, both sides checked, in the notebook.

- `records`: what a watcher saw, one record at a time (the contract between the watchers and
  the notebook; imports nothing of ours).
- `relay`: the stdio relay (`python -m mcp_notebook.tap -- COMMAND`): bytes both ways unchanged,
  with `recorder` making the records off the relayed path, `feed` streaming them to the notebook
  watching the name (never waited on) and `recording` keeping them on disk, bounded.
- `rendezvous`: where relays and notebooks meet: a private per-user directory, a socket per name.
"""
