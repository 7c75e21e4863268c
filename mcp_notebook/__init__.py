"""mcp-notebook: a Model Context Protocol client for notebooks.

Sessions live on one background thread, so a connection opened in one cell is used
and closed in later cells, and server pings are answered at once while cells run.
"""

from .api.connection import Connection, aconnect, close_all, connect, connections, get_connection
from .api.demo import demo
from .api.results import Listing, PromptResult, ResourceResult, ToolResult
from .api.tasks import TaskCancelled, TaskList
from .api.url_required import UrlElicitationRequired
from .api.validate import OutputSchemaError, ToolArgumentError
from .base.about import __version__
from .base.errors import ConnectionClosed, HandshakeError, McpError, McpNotebookError, RequestTimeout, UsageError
from .session.health import Health
from .session.trace import Trace, TraceEntry, load_trace


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """`%load_ext mcp_notebook`: register the `%mcp` magics; starts no thread and no process."""
    from .notebook.magics import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Close every connection and stop the background thread."""
    from .notebook.magics import unload

    unload(ipython)


__all__ = [
    "Connection",
    "ConnectionClosed",
    "HandshakeError",
    "Health",
    "McpError",
    "McpNotebookError",
    "Listing",
    "OutputSchemaError",
    "PromptResult",
    "ResourceResult",
    "ToolArgumentError",
    "ToolResult",
    "RequestTimeout",
    "TaskCancelled",
    "TaskList",
    "Trace",
    "TraceEntry",
    "UrlElicitationRequired",
    "UsageError",
    "__version__",
    "aconnect",
    "close_all",
    "connect",
    "connections",
    "demo",
    "get_connection",
    "load_trace",
]
