"""The `%mcp` line magic: a thin IPython front end over the subcommands in `commands`, which the
feature modules imported here register (one module per feature group).

User mistakes surface as IPython's own UsageError: one line, no traceback, and the cell
counts as failed so "run all" stops there.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from . import auth as _auth  # noqa: F401 - each registers its subcommands: help lists them in this order
from . import commands as _commands
from . import compare as _compare  # noqa: F401
from . import configs as _configs  # noqa: F401
from . import doctor as _doctor  # noqa: F401
from . import health as _health  # noqa: F401
from . import logs as _logs  # noqa: F401
from . import prompts as _prompts  # noqa: F401
from . import resources as _resources  # noqa: F401
from . import roots as _roots  # noqa: F401
from . import session as _session  # noqa: F401
from . import tap as _tap  # noqa: F401
from . import tasks as _tasks  # noqa: F401
from . import tools as _tools
from . import trace as _trace  # noqa: F401


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
                return _tools.run_cell(line, cell)
            except _commands.CommandError as exc:
                raise IPythonUsageError(str(exc)) from None
        return run_line(line)
