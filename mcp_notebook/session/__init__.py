"""The session layer: one MCP session over one transport on one event loop.

Requests and responses, server requests and pings answered inline, the handshake and era
negotiation (`negotiation`, choosing one `era.Era` strategy), subscriptions, and the health
counters and trace the session keeps. It knows nothing of IPython or the public API.

Its threading contract, which it alone keeps: the session runs on one event loop (the
runtime's thread), and that loop owns its state. A caller on any other thread or asyncio
loop goes through one boundary, `Session.call`, and holds the `PendingCall` it returns: a
one-round request is written from the caller's thread where the transport allows it
(stdio) and otherwise handed to the loop in one hop; a transport with a reading thread of
its own settles the answer there, and a server ping is answered there too; settling wakes
the caller where it waits. Cancelling (a timeout, Ctrl-C, a cancelled task) hops to the
loop and returns once the server has been told. Nothing above the session touches its
locks, its loop or its wire primitives (`tests/test_boundaries.py`).
"""
