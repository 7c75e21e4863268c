"""How a server is doing: alive (the health monitor: keepalive and the ready/degraded/stale
states) and well-behaved (`violations`: the rules its frames broke)."""
