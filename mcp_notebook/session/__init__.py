"""The session layer: one MCP session over one transport on one event loop.

Requests and responses, server requests and pings answered inline, the handshake and era
negotiation, subscriptions, and the health counters and trace the session keeps. Nothing
here knows of threads, IPython or the public API."""
