"""An IPython shell with the %mcp magics loaded, for a test or a whole module."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def magics_shell() -> Iterator[Any]:
    """IPython's InteractiveShell with the %mcp magics loaded; unloaded and the shell cleared
    after. The `shell` and `module_shell` fixtures below, for a test or a whole module."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    yield ip
    ip.run_line_magic("unload_ext", "mcp_notebook")
    InteractiveShell.clear_instance()
