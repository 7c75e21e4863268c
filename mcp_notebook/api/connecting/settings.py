"""Defaults every new connection takes: keepalive, trace size, message limit, HTTP read timeout, health history,
render rate; and our own server configuration files.

A traitlets Configurable, so `%config McpNotebook.keepalive_interval = 10` (or an
ipython_config.py) sets them; plain Python reads and writes `defaults.<name>` the same
way. traitlets is a small standalone library: nothing here needs IPython.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traitlets import Bool, Float, Int, List, Unicode, observe
from traitlets.config import Configurable

from ...session.trace import DEFAULT_MAX_BYTES
from ...transports.base import MAX_FRAME_BYTES


class McpNotebook(Configurable):
    """Defaults for mcp-notebook connections (per-connection settings override them)."""

    keepalive = Bool(True, help="Ping handshake-era servers periodically to notice a hung server.").tag(config=True)
    keepalive_interval = Float(30.0, help="Seconds between keepalive pings.").tag(config=True)
    keepalive_timeout = Float(10.0, help="Seconds to wait for a keepalive pong before counting a miss.").tag(config=True)
    keepalive_misses = Int(3, help="Consecutive missed keepalive pings that make a connection stale.").tag(config=True)
    trace_capacity = Int(10_000, help="Entries each connection's trace ring buffer keeps.").tag(config=True)
    trace_max_bytes = Int(
        DEFAULT_MAX_BYTES, min=1024, help="About the most memory each connection's trace holds (huge frames are clipped)."
    ).tag(config=True)
    max_frame_bytes = Int(
        MAX_FRAME_BYTES,
        min=1024,
        help="Largest message read from a server: a stdio line, an HTTP body or an SSE event (larger ones are refused).",
    ).tag(config=True)
    http_read_timeout = Float(
        30.0,
        min=0.001,
        help="Seconds an HTTP server may pause in an answer with no deadline of its own (a body, the status of a "
        "notification or response we POST) before it fails; an SSE stream answering a request has the request's timeout.",
    ).tag(config=True)
    health_history = Int(300, help="Health snapshots kept per connection (conn.monitor.history).").tag(config=True)
    health_history_interval = Float(1.0, help="Seconds between the health snapshots kept.").tag(config=True)
    render_rate = Float(10.0, help="Most widget renders per second, however fast frames arrive.").tag(config=True)
    proxy = Unicode(
        None,
        allow_none=True,
        help="Proxy URL for every HTTP request (empty: none); unset, HTTP_PROXY / HTTPS_PROXY / NO_PROXY decide.",
    ).tag(config=True)
    public_url = Unicode(
        None,
        allow_none=True,
        help="The Jupyter server's URL as your browser reaches it (its origin is used), for the OAuth callback "
        "when the server cannot tell (behind a proxy, through an SSH tunnel); OAuth(public_url=...) wins.",
    ).tag(config=True)
    config_files = List(
        Unicode(), help="Server configuration files of our own (the mcpServers format), read with the other clients' files."
    ).tag(config=True)

    @observe(
        "keepalive",
        "keepalive_interval",
        "keepalive_timeout",
        "keepalive_misses",
        "health_history_interval",
        "render_rate",
    )
    def _changed(self, change: dict[str, Any]) -> None:
        for listener in list(_listeners):
            listener()


_listeners: list[Callable[[], None]] = []

defaults = McpNotebook()


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener()` (on the changing thread) whenever a live setting changes."""
    _listeners.append(listener)


def register(shell: Any) -> None:
    """Make `%config McpNotebook` reach `defaults` and apply the shell's config to it."""
    if defaults not in shell.configurables:
        defaults.update_config(shell.config)
        shell.configurables.append(defaults)
