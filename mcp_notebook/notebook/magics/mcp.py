"""The `%mcp` line magic: a thin IPython front end over the subcommands in `commands`.

User mistakes surface as IPython's own UsageError: one line, no traceback, and the cell
counts as failed so "run all" stops there.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ...api.connecting import connect as api
from ...api.connecting import settings as _settings
from ...runtime import get_runtime
from ..completion import ipython as _completion
from . import auth as _magic_auth  # noqa: F401 - registers its subcommands
from . import commands as _commands
from . import compare as _magic_compare  # noqa: F401 - registers its subcommands
from . import configs as _magic_configs  # noqa: F401 - registers its subcommands
from . import doctor as _magic_doctor  # noqa: F401 - registers its subcommands
from . import features as _magic_features  # tools, resources, prompts, logging
from . import health as _magic_health  # noqa: F401 - registers its subcommands
from . import session as _magic_session  # noqa: F401 - registers its subcommands
from . import tool as _magic_tool  # noqa: F401 - registers its subcommands
from . import violations as _magic_violations  # noqa: F401 - registers its subcommands


def run_line(line: str) -> Any:
    """Run one `%mcp` line as the magic does."""
    try:
        return _commands.run(line)
    except _commands.CommandError as exc:
        raise IPythonUsageError(str(exc)) from None  # IPython shows exactly this type as one line


@magics_class
class McpMagics(Magics):
    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None) -> Any:
        """Talk to MCP servers; `%mcp help` lists the subcommands (`%%mcp call TOOL`: arguments in the body)."""
        if cell is not None:
            try:
                return _magic_features.run_cell(line, cell)
            except _commands.CommandError as exc:
                raise IPythonUsageError(str(exc)) from None
        return run_line(line)


def load(ipython: Any) -> None:
    ipython.register_magics(McpMagics)
    _settings.register(ipython)  # %config McpNotebook.keepalive_interval = ...
    _completion.register(ipython)  # Tab on %mcp lines and in conn.call_tool("...


def unload(ipython: Any) -> None:
    api.close_all()
    get_runtime().stop()
