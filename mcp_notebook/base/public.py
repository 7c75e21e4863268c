"""Public classes print as `mcp_notebook.X`, wherever they are defined and however they were reached.

The package imports its public names lazily (`mcp_notebook.__getattr__`), so the defining module,
not the package, marks its class; a traceback shows `mcp_notebook.ConnectionClosed` even when
the user never touched `mcp_notebook.ConnectionClosed`. Imports nothing.
"""

from __future__ import annotations

from typing import TypeVar

PACKAGE = __name__.split(".")[0]
T = TypeVar("T", bound=type)


def public(cls: T) -> T:
    """Mark `cls` as a member of the package (it must be in `mcp_notebook.__all__`)."""
    cls.__module__ = PACKAGE
    return cls
