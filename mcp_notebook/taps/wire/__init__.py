"""What relays and notebooks share, and nothing else: `records` (what a watcher saw, one JSON line
a record), `rendezvous` (where they meet: a private per-user directory, a socket per tap name) and
`recording` (a relayed session kept on disk, bounded). It imports nothing of ours beyond the base:
the relay, which a client starts for every session, must start fast.
"""
