"""mcp-notebook: a Model Context Protocol client for notebooks.

Sessions live on one background thread, so a connection opened in one cell is used
and closed in later cells, and server pings are answered at once while cells run.
"""

from ._about import __version__
from ._connection import (
    Connection,
    aconnect,
    close_all,
    connect,
    connections,
    get_connection,
)
from ._demo import demo
from ._errors import (
    ConnectionClosed,
    HandshakeError,
    McpError,
    McpNotebookError,
    RequestTimeout,
    UsageError,
)
from ._health import Health
from ._results import Listing, PromptResult, ResourceResult, ToolResult
from ._tasks import TaskCancelled, TaskList
from ._trace import Trace, TraceEntry, load_trace
from ._url_required import UrlElicitationRequired
from ._validate import OutputSchemaError, ToolArgumentError


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """`%load_ext mcp_notebook`: register the `%mcp` magics; starts no thread and no process."""
    from ._magics import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Close every connection and stop the background thread."""
    from ._magics import unload

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
