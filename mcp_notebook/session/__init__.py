"""The session layer: one MCP session over one transport on one event loop.

A request in flight, one word per concept (the class, and the module that holds it):
- request: one JSON-RPC request of ours on the wire, with its id; its response (or a failure)
  settles it once. `Request`, session/requests.py (with `InFlight`, those on the wire by id).
- round: one request within a call, sent and awaited by a flow's `Rounds` (session/flow.py).
- call: what a caller started and waits for, one or more rounds to one outcome, under one deadline;
  waited on, awaited or cancelled (which tells the server). `PendingCall`, session/pending.py.
- flow: a call of several rounds, run as a task on the session loop. `Flow`, session/flow.py.
- call boundary: where any thread or asyncio loop starts a call (`Session.call`), and how a call
  reaches the loop again. `CallBoundary`, session/boundary.py.
- caller: the thread or coroutine waiting on a call; what it sees while it waits (deadline,
  progress, log lines, questions). `Caller`, api/calls/progress.py.
- call spec: one call a feature method's steps ask for. `CallSpec`, api/calls/exchange.py.
- era: the legacy or the modern rules, as one strategy. `Era`, session/era.py; which one, the
  negotiator decides: `EraNegotiator`, session/negotiation.py.
- pong: our answer to a server's ping, written by `Inbound.pong`, session/inbound.py.

Requests and responses, server requests and pings answered inline, the handshake and era
negotiation, subscriptions, and the health counters and trace the session keeps. It knows
nothing of IPython or the public API.

Its threading contract, which it alone keeps: the session runs on one event loop (the
runtime's thread), and that loop owns its state. A caller on any other thread or asyncio
loop goes through the call boundary and holds the `PendingCall` it returns: a one-round
call is written from the caller's thread where the transport allows it (stdio) and
otherwise handed to the loop in one hop; a transport with a reading thread of its own
settles the answer there, and a server ping is answered there too; settling wakes the
caller where it waits. Cancelling (a timeout, Ctrl-C, a cancelled task) hops to the loop
and returns once the server has been told. Nothing above the session touches its locks,
its loop or its wire primitives (`tests/test_boundaries.py`).
"""
