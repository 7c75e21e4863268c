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
- `api`: `connect()`, `Connection` and the client features, grouped by feature into
  subpackages (`api.tools`, `api.resources`, `api.prompts`, `api.tasks`, `api.apps`, ...), the
  health monitor, settings, result objects. It shows things to people only through an
  `api.display.frontend.FrontEnd`.
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

from .api.display import frontend as _frontend

if TYPE_CHECKING:  # what type checkers and editors see: the names themselves (`__all__` exports them)
    from .api.calls.progress import LogRecord
    from .api.cassettes.compare import compare
    from .api.cassettes.comparison import Comparison
    from .api.cassettes.replay import replay
    from .api.client_side.url_required import UrlElicitationRequired
    from .api.connecting.connect import aconnect, close_all, connect, connections, get_connection
    from .api.connecting.demo import demo
    from .api.connecting.options import ConnectOptions
    from .api.connecting.server_listing import configured_servers, connect_all
    from .api.connection import Connection
    from .api.display.diagram import Diagram
    from .api.doctor.report import Diagnosis
    from .api.doctor.run import doctor
    from .api.results.objects import Listing, PromptResult, ResourceResult, ToolResult
    from .api.tasks.follow import TaskCancelled, TaskList
    from .api.tools.arguments import ExtraArgumentWarning
    from .api.tools.pins import accept as accept_tools
    from .api.tools.pins import tool_changes
    from .api.tools.validate import OutputSchemaError, ToolArgumentError
    from .api.tools.view import ToolView
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
    "Comparison": "api.cassettes.comparison",
    "ConnectOptions": "api.connecting.options",
    "Connection": "api.connection",
    "ConnectionClosed": "base.errors",
    "CrossAppAccess": "auth.config",
    "Diagnosis": "api.doctor.report",
    "Diagram": "api.display.diagram",
    "ExtraArgumentWarning": "api.tools.arguments",
    "HandshakeError": "base.errors",
    "Health": "session.health",
    "Interrupted": "base.errors",
    "Listing": "api.results.objects",
    "LogRecord": "api.calls.progress",
    "McpError": "base.errors",
    "McpNotebookError": "base.errors",
    "OAuth": "auth.config",
    "OutputSchemaError": "api.tools.validate",
    "PromptResult": "api.results.objects",
    "ProtocolViolation": "base.errors",
    "RequestTimeout": "base.errors",
    "ResourceResult": "api.results.objects",
    "StreamBroken": "base.errors",
    "Subscription": "session.subscriptions",
    "TaskCancelled": "api.tasks.follow",
    "TaskList": "api.tasks.follow",
    "ToolArgumentError": "api.tools.validate",
    "ToolResult": "api.results.objects",
    "ToolView": "api.tools.view",
    "Trace": "session.trace",
    "TraceEntry": "session.trace",
    "TransportClosed": "base.errors",
    "TransportError": "base.errors",
    "UrlElicitationRequired": "api.client_side.url_required",
    "UsageError": "base.errors",
    "Violation": "protocol.frame_rules",
    "__version__": "base.about",
    "accept_tools": "api.tools.pins:accept",
    "aconnect": "api.connecting.connect",
    "close_all": "api.connecting.connect",
    "compare": "api.cassettes.compare",
    "configured_servers": "api.connecting.server_listing",
    "connect": "api.connecting.connect",
    "connect_all": "api.connecting.server_listing",
    "connections": "api.connecting.connect",
    "demo": "api.connecting.demo",
    "doctor": "api.doctor.run",
    "get_connection": "api.connecting.connect",
    "load_trace": "session.trace",
    "replay": "api.cassettes.replay",
    "tool_changes": "api.tools.pins",
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
