"""mcp-notebook: a Model Context Protocol client for notebooks.

Sessions live on one background thread, so a connection opened in one cell is used
and closed in later cells, and server pings are answered at once while cells run.

The package is built in layers; each imports only from the layers below it, and no
module imports itself back through others (`tests/test_architecture.py` holds it to that):

- `base`: who the client is, the exceptions, escaping server text. Imports nothing of ours.
- `protocol`: JSON-RPC frames, protocol versions, the rules of each era. No I/O.
- `transports`: stdio and HTTP, moving frames; they know nothing of MCP methods.
- `auth`: the OAuth client of HTTP servers (discovery, client identity, grants, tokens),
  plugged into the HTTP transport as its `AuthHook`; who asks the user is injected from above.
- `session`: one MCP session on an event loop: requests, pings answered inline, the
  handshake and era negotiation, subscriptions, health counters and the trace.
- `runtime`: the one background thread and its event loop, bridging callers to it.
- `configs`: other clients' server configurations, read-only, and what we remember about
  them in the user data directory: consent to run a configured command, pinned tool definitions.
- `api`: `connect()`, `Connection` and the client features, the health monitor, settings,
  result objects. It shows things to people only through an `api.frontend.FrontEnd`.
- `notebook`: the `%mcp` magics, widgets and the display of waiting calls; thin front
  ends over the API.

`demo_server` is a separate program (it stands on `base` and `protocol` only), `cassette`
another (saved sessions played back as a server, on the demo server's framing; `replay` runs it), and
`__main__` is the command-line client. This file is the one place that wires layers
together: it plugs the notebook's front end into the API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .api import frontend as _frontend

if TYPE_CHECKING:  # what type checkers and editors see: the names themselves (`__all__` exports them)
    from .api.arguments import ExtraArgumentWarning
    from .api.compare import compare
    from .api.comparison import Comparison
    from .api.connect import aconnect, close_all, connect, connections, get_connection
    from .api.connection import Connection
    from .api.demo import demo
    from .api.diagram import Diagram
    from .api.doctor import doctor
    from .api.doctor_report import Diagnosis
    from .api.options import ConnectOptions
    from .api.progress import LogRecord
    from .api.replay import replay
    from .api.results import Listing, PromptResult, ResourceResult, ToolResult
    from .api.server_listing import configured_servers, connect_all
    from .api.tasks import TaskCancelled, TaskList
    from .api.tool_pins import accept as accept_tools
    from .api.tool_pins import tool_changes
    from .api.tool_view import ToolView
    from .api.url_required import UrlElicitationRequired
    from .api.validate import OutputSchemaError, ToolArgumentError
    from .auth.config import CrossAppAccess, OAuth
    from .base.about import __version__
    from .base.errors import (
        AuthorizationError,
        ConnectionClosed,
        HandshakeError,
        Interrupted,
        McpError,
        McpNotebookError,
        ProtocolViolation,
        RequestTimeout,
        StreamBroken,
        TransportClosed,
        TransportError,
        UsageError,
    )
    from .protocol.frame_rules import Violation
    from .session.health import Health
    from .session.subscriptions import Subscription
    from .session.trace import Trace, TraceEntry, load_trace

# Where each public name lives. `import mcp_notebook` imports none of it: a name's module is
# imported when the name is first used (PEP 562), so a notebook's first cell stays light and
# the HTTP stack, widgets and the rest come with what needs them. The classes print as
# `mcp_notebook.X` all the same (`base.public`).
_HOMES = {
    "AuthorizationError": "base.errors",
    "Comparison": "api.comparison",
    "ConnectOptions": "api.options",
    "Connection": "api.connection",
    "ConnectionClosed": "base.errors",
    "CrossAppAccess": "auth.config",
    "Diagnosis": "api.doctor_report",
    "Diagram": "api.diagram",
    "ExtraArgumentWarning": "api.arguments",
    "HandshakeError": "base.errors",
    "Health": "session.health",
    "Interrupted": "base.errors",
    "Listing": "api.results",
    "LogRecord": "api.progress",
    "McpError": "base.errors",
    "McpNotebookError": "base.errors",
    "OAuth": "auth.config",
    "OutputSchemaError": "api.validate",
    "PromptResult": "api.results",
    "ProtocolViolation": "base.errors",
    "RequestTimeout": "base.errors",
    "ResourceResult": "api.results",
    "StreamBroken": "base.errors",
    "Subscription": "session.subscriptions",
    "TaskCancelled": "api.tasks",
    "TaskList": "api.tasks",
    "ToolArgumentError": "api.validate",
    "ToolResult": "api.results",
    "ToolView": "api.tool_view",
    "Trace": "session.trace",
    "TraceEntry": "session.trace",
    "TransportClosed": "base.errors",
    "TransportError": "base.errors",
    "UrlElicitationRequired": "api.url_required",
    "UsageError": "base.errors",
    "Violation": "protocol.frame_rules",
    "__version__": "base.about",
    "accept_tools": "api.tool_pins:accept",
    "aconnect": "api.connect",
    "close_all": "api.connect",
    "compare": "api.compare",
    "configured_servers": "api.server_listing",
    "connect": "api.connect",
    "connect_all": "api.server_listing",
    "connections": "api.connect",
    "demo": "api.demo",
    "doctor": "api.doctor",
    "get_connection": "api.connect",
    "load_trace": "session.trace",
    "replay": "api.replay",
    "tool_changes": "api.tool_pins",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(f".{module}", __name__), attribute or name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def _notebook_front_end() -> _frontend.FrontEnd:
    from .notebook.display import NotebookFrontEnd

    return NotebookFrontEnd()


_frontend.use(_notebook_front_end)


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """`%load_ext mcp_notebook`: register the `%mcp` magics; starts no thread and no process."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Close every connection and stop the background thread."""
    from .notebook.magics import unload

    unload(ipython)


__all__ = [
    "AuthorizationError",
    "Comparison",
    "ConnectOptions",
    "Connection",
    "ConnectionClosed",
    "CrossAppAccess",
    "Diagnosis",
    "Diagram",
    "ExtraArgumentWarning",
    "HandshakeError",
    "Health",
    "Interrupted",
    "Listing",
    "LogRecord",
    "McpError",
    "McpNotebookError",
    "OAuth",
    "OutputSchemaError",
    "PromptResult",
    "ProtocolViolation",
    "RequestTimeout",
    "ResourceResult",
    "StreamBroken",
    "Subscription",
    "TaskCancelled",
    "TaskList",
    "ToolArgumentError",
    "ToolResult",
    "ToolView",
    "Trace",
    "TraceEntry",
    "TransportClosed",
    "TransportError",
    "UrlElicitationRequired",
    "UsageError",
    "Violation",
    "__version__",
    "accept_tools",
    "aconnect",
    "close_all",
    "compare",
    "configured_servers",
    "connect",
    "connect_all",
    "connections",
    "demo",
    "doctor",
    "get_connection",
    "load_trace",
    "replay",
    "tool_changes",
]
