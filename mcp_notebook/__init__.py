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
- `diagnosis`: the connection doctor (`mcp_notebook.doctor()`, `%mcp doctor`, the command
  line's `doctor`), an application over the API: it connects step by step and says what failed
  and what to try, probing HTTP through the transports layer's functions. (Not named `doctor`:
  that is the package's public function, which a subpackage of the same name would shadow.)
- `taps`: the tap (`mcp_notebook.tap()`, `%mcp tap`): any client's session with any server,
  watched through a stdio relay (`python -m mcp_notebook.tap -- COMMAND`, its own small program
  standing on `taps.wire` and the base) or an HTTP reverse proxy, both sides checked; an
  application over the API. (`mcp_notebook/tap.py` is only the relay's `-m` entry.)
- `workloads`: many sessions at once: load tests of a server (`mcp_notebook.load()`, `%mcp load`),
  in the kernel or split over a Dask cluster's workers; an application over the API. (Not named
  `load`: that is the package's public function.)
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

# The public names, by the module that defines each: the one list. `__all__`, the lazy loader
# below and the exported-names test (tests/test_public_api.py) read it, and that test holds the
# TYPE_CHECKING imports to it. A module that moves is its one line here, and its imports below
# (the test names any that differ).
_PUBLIC: dict[str, tuple[str, ...]] = {
    "api.tools.arguments": ("ExtraArgumentWarning",),
    "api.cassettes.compare": ("compare",),
    "api.cassettes.comparison": ("Comparison",),
    "api.connecting.connect": ("aconnect", "close_all", "connect", "connections", "get_connection"),
    "api.aio": ("AsyncConnection",),
    "api.batch.result": ("BatchResult",),
    "api.connection": ("Connection",),
    "api.records": ("ServerLog", "Subscriptions"),
    "api.connecting.demo": ("demo",),
    "api.display.diagram": ("Diagram",),
    "diagnosis.run": ("doctor",),
    "diagnosis.report": ("Diagnosis",),
    "api.connecting.options": ("ConnectOptions",),
    "api.calls.progress": ("LogRecord",),
    "api.cassettes.replay": ("replay",),
    "api.results.objects": ("Listing", "PromptResult", "ResourceResult", "ToolResult"),
    "api.connecting.server_listing": ("configured_servers", "connect_all"),
    "api.skills.methods": ("LoadedSkill", "Skill", "SkillVerificationError"),
    "api.tasks.follow": ("TaskCancelled", "TaskList"),
    "api.tools.pins": ("accept_tools", "tool_changes"),
    "api.tools.view": ("ToolView",),
    "api.client_side.url_required": ("UrlElicitationRequired",),
    "api.tools.validate": ("OutputSchemaError", "ToolArgumentError"),
    "auth.config": ("CrossAppAccess", "OAuth"),
    "base.about": ("__version__",),
    "base.errors": (
        "AuthorizationError",
        "ConnectionClosed",
        "HandshakeError",
        "Interrupted",
        "McpError",
        "McpNotebookError",
        "ProtocolViolation",
        "RequestTimeout",
        "StreamBroken",
        "TransportClosed",
        "TransportError",
        "UsageError",
    ),
    "protocol.frame_rules": ("Violation",),
    "session.health": ("Health",),
    "session.subscriptions": ("Subscription",),
    "session.trace": ("Trace", "TraceEntry", "load_trace"),
    "taps.observing.health": ("TapHealth",),
    "taps.tap": ("Tap", "tap"),
    "workloads.report": ("LoadReport",),
    "workloads.run": ("load",),
}

if TYPE_CHECKING:  # what type checkers and editors see: the names of `_PUBLIC`, re-exported (`as`)
    from .api.aio import AsyncConnection as AsyncConnection
    from .api.batch.result import BatchResult as BatchResult
    from .api.calls.progress import LogRecord as LogRecord
    from .api.cassettes.compare import compare as compare
    from .api.cassettes.comparison import Comparison as Comparison
    from .api.cassettes.replay import replay as replay
    from .api.client_side.url_required import UrlElicitationRequired as UrlElicitationRequired
    from .api.connecting.connect import aconnect as aconnect
    from .api.connecting.connect import close_all as close_all
    from .api.connecting.connect import connect as connect
    from .api.connecting.connect import connections as connections
    from .api.connecting.connect import get_connection as get_connection
    from .api.connecting.demo import demo as demo
    from .api.connecting.options import ConnectOptions as ConnectOptions
    from .api.connecting.server_listing import configured_servers as configured_servers
    from .api.connecting.server_listing import connect_all as connect_all
    from .api.connection import Connection as Connection
    from .api.display.diagram import Diagram as Diagram
    from .api.records import ServerLog as ServerLog
    from .api.records import Subscriptions as Subscriptions
    from .api.results.objects import Listing as Listing
    from .api.results.objects import PromptResult as PromptResult
    from .api.results.objects import ResourceResult as ResourceResult
    from .api.results.objects import ToolResult as ToolResult
    from .api.skills.methods import LoadedSkill as LoadedSkill
    from .api.skills.methods import Skill as Skill
    from .api.skills.methods import SkillVerificationError as SkillVerificationError
    from .api.tasks.follow import TaskCancelled as TaskCancelled
    from .api.tasks.follow import TaskList as TaskList
    from .api.tools.arguments import ExtraArgumentWarning as ExtraArgumentWarning
    from .api.tools.pins import accept_tools as accept_tools
    from .api.tools.pins import tool_changes as tool_changes
    from .api.tools.validate import OutputSchemaError as OutputSchemaError
    from .api.tools.validate import ToolArgumentError as ToolArgumentError
    from .api.tools.view import ToolView as ToolView
    from .auth.config import CrossAppAccess as CrossAppAccess
    from .auth.config import OAuth as OAuth
    from .base.about import __version__ as __version__
    from .base.errors import AuthorizationError as AuthorizationError
    from .base.errors import ConnectionClosed as ConnectionClosed
    from .base.errors import HandshakeError as HandshakeError
    from .base.errors import Interrupted as Interrupted
    from .base.errors import McpError as McpError
    from .base.errors import McpNotebookError as McpNotebookError
    from .base.errors import ProtocolViolation as ProtocolViolation
    from .base.errors import RequestTimeout as RequestTimeout
    from .base.errors import StreamBroken as StreamBroken
    from .base.errors import TransportClosed as TransportClosed
    from .base.errors import TransportError as TransportError
    from .base.errors import UsageError as UsageError
    from .diagnosis.report import Diagnosis as Diagnosis
    from .diagnosis.run import doctor as doctor
    from .protocol.frame_rules import Violation as Violation
    from .session.health import Health as Health
    from .session.subscriptions import Subscription as Subscription
    from .session.trace import Trace as Trace
    from .session.trace import TraceEntry as TraceEntry
    from .session.trace import load_trace as load_trace
    from .taps.observing.health import TapHealth as TapHealth
    from .taps.tap import Tap as Tap
    from .taps.tap import tap as tap
    from .workloads.report import LoadReport as LoadReport
    from .workloads.run import load as load

# `import mcp_notebook` imports none of it: a name's module is imported when the name is first
# used (PEP 562), so a notebook's first cell stays light and the HTTP stack, widgets and the rest
# come with what needs them. The classes print as `mcp_notebook.X` all the same (`base.public`).
_HOMES = {name: module for module, names in _PUBLIC.items() for name in names}
# pyright cannot read an `__all__` it is not given literally; what it exports it takes from the
# TYPE_CHECKING re-exports above, which the test holds to this same table.
__all__ = sorted(_HOMES)  # pyright: ignore[reportUnsupportedDunderAll]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def _notebook_front_end() -> _frontend.FrontEnd:
    from .notebook.frontend import NotebookFrontEnd

    return NotebookFrontEnd()


_frontend.use(_notebook_front_end)


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """`%load_ext mcp_notebook`: register the `%mcp` magics; starts no thread and no process."""
    from .notebook.frontend import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Close every connection and stop the background thread."""
    from .notebook.frontend import unload

    unload(ipython)
