"""A demo MCP server shipped with mcp-notebook, for notebooks, teaching and tests.

Run it with ``python -m mcp_notebook.demo_server [--transport stdio|http] [--port N]
[--era legacy|modern|both] [--ping-interval SECONDS] [fault switches...]`` (``--help``
lists everything), or from Python::

    from mcp_notebook import demo_server

    argv = demo_server.command("stdio", era="legacy", pong_delay_ms=200)   # for a stdio client
    process, url = demo_server.start_http(era="both", ping_interval=1.0)   # http://127.0.0.1:PORT/mcp
    process.stop()

It needs only the package's runtime dependencies (anyio, and h11 for HTTP/1.1).

Eras
----
* legacy (2024-11-05 .. 2025-11-25): ``initialize`` (answered with the client's
  version when it is one of the four, else 2025-11-25), ``notifications/initialized``,
  ``ping`` both ways, the features below, ``logging/setLevel``, ``resources/subscribe``
  and ``unsubscribe``, ``notifications/cancelled``, progress for requests with
  ``_meta.progressToken``; ``ask_name`` and ``summarize`` send ``elicitation/create`` and
  ``sampling/createMessage`` to the client. On HTTP, response stream events carry ids
  and a GET with ``Last-Event-ID`` resumes a dropped stream.
  With ``--ping-interval`` the server pings the client once initialized and writes a
  stderr line per pong (``pong N (demo-ping-K) after X ms``).
* modern (2026-07-28): no ``initialize``; each request carries ``_meta`` with the
  protocol version and client capabilities. ``server/discover``; results carry
  ``resultType: "complete"`` and ``_meta["io.modelcontextprotocol/serverInfo"]``.
  Missing ``_meta`` fields give -32602, HTTP header disagreement -32020, an
  unsupported version -32022 (``data.supported``/``data.requested``), ``ping`` and
  other unknown methods -32601. No server-to-client requests, no sessions: a tool that
  needs the user answers ``input_required``; ``subscriptions/listen`` carries updates.
* both: served by how the client opens (``initialize`` -> legacy, a request with
  modern ``_meta`` -> modern): per process on stdio, per session / request on HTTP.

Features
--------
Tools: ``echo(text)``, ``add(a, b)`` (also structured ``{"sum": ...}`` from 2025-06-18),
``slow(seconds=5, steps=5)`` (progress after each step when asked for; stops when
cancelled), ``image()`` (a 16x16 PNG as image content), ``log(message, level)`` (one
``notifications/message``), ``bump(by=1)`` (raises ``demo://counter`` and tells its
subscribers), ``ask_name()`` (elicitation), ``summarize(text)`` (sampling),
``drop_stream(seconds)`` (legacy HTTP: closes its response stream before answering),
``faults(...)``. Resources ``demo://readme``, ``demo://counter``, ``demo://image``;
templates ``demo://greeting/{person}``, ``demo://square/{n}``; prompts ``greet(name,
style)`` and ``review(code, language)``; ``completion/complete`` for prompt arguments and
template variables.

MCP Apps
--------
To a client that declares the ``io.modelcontextprotocol/ui`` extension (legacy: in
``initialize``; modern: in each request's ``_meta``) the server also offers a live view of
its counters: ``counters()`` (its view ``ui://demo/counters``, read with ``resources/read``)
and ``counters-poll()`` (visibility ["app"]: for the view to poll). See ``_ui_app``.

Fault switches (command-line flags, ``faults`` tool arguments, ``command()`` keywords)
------------------------------------------------------------------------------------
Settings hold until changed:

* ``pong_delay_ms``: answer each client ping N ms after it arrived; lowering it
  releases pongs already waiting.
* ``ignore_pings``: leave client pings unanswered, for good.
* ``drop_percent``: withhold N% of responses to client requests (on HTTP the request
  stays open until the client gives up); ``initialize`` and ``server/discover`` are
  never dropped. Decided when the response is ready, so the reply to the ``faults``
  call that sets it is judged by the new value. ``seed`` seeds the RNG (default 0).

Actions happen once, during a ``tools/call``: the ``faults`` call that asks for them,
or, given on the command line, the first ``tools/call`` the server receives:

* ``crash``: a line on stderr, then exit code 3 (on HTTP too: the process stops).
* ``expire_session``: legacy HTTP: forget the session after this response; its next
  request gets 404. Elsewhere there is no session and the result says so.
* ``malformed``: one frame that is not JSON before the response: a garbage line on
  stdio, an SSE event with invalid JSON on the request's HTTP response stream.
* ``flood``: N ``notifications/message`` (level info) before the response, on the
  request's channel. Legacy honours ``logging/setLevel``; modern sends them only to a
  request that opts in with ``_meta["io.modelcontextprotocol/logLevel"]``.

Counters (client pings received / ignored, server pings sent, pongs received,
responses dropped, requests cancelled) come back from every ``faults`` call.

OAuth-protected mode (HTTP only)
--------------------------------
``--oauth`` (``start_http(oauth=OAuthSettings(...))``) puts ``/mcp`` behind bearer tokens
from an authorization server in the same process, on the same origin: protected resource
metadata (RFC 9728), authorization server metadata (RFC 8414, S256 PKCE), dynamic client
registration, an authorization endpoint that approves at once and redirects with ``code``,
``state`` and ``iss``, and a token endpoint (authorization code with PKCE and ``resource``
checked; refresh tokens that rotate), and the device authorization grant (RFC 8628, at
``/device_authorization``: approved by itself at the second poll). Scopes: ``demo:tools`` for everything, plus
``demo:admin`` for the ``--step-up-tool``. Its fault switches: ``--token-seconds N``,
``--token-calls N`` (a token is good for N tool calls), ``--step-up-tool TOOL`` (403
``insufficient_scope``), ``--refreshes N`` (later refreshes fail: the client must authorize
again), ``--device-interval N`` and ``--device-fault slow|deny|expire|pending|later`` (what the device
grant's polls meet), ``--issued-log FILE`` (every secret issued, for tests). See ``_authserver``,
``_device`` and ``_guard``.

Not supported: JSON-RPC batches (2025-03-26), list-changed notifications, pagination.
"""

from __future__ import annotations

from ._app import CRASH_EXIT_CODE, ERAS
from ._faults import NAMES as FAULTS
from ._launch import DemoServerProcess, LineLog, command, start_http
from ._oauth_settings import OAuthSettings

__all__ = [
    "CRASH_EXIT_CODE",
    "ERAS",
    "FAULTS",
    "DemoServerProcess",
    "LineLog",
    "OAuthSettings",
    "command",
    "start_http",
]
