"""The `%mcp` subcommand registry and the parsing helpers subcommands share.

Subcommands are plain functions of their argument list; they know nothing of IPython
(the magic in `magics` turns their errors into one-line UsageErrors). Each feature
registers its own subcommands from its own module with `@subcommand`.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from ..api import connect as api
from ..base.errors import McpNotebookError, UsageError


class CommandError(UsageError):
    """A user mistake in a `%mcp` line; shown as one line, never a traceback."""


@dataclass(frozen=True)
class Subcommand:
    name: str
    usage: str
    summary: str
    run: Callable[[list[str]], Any]


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(name: str, usage: str, summary: str) -> Callable[[Callable[[list[str]], Any]], Callable[[list[str]], Any]]:
    """Register `fn(args)` as `%mcp NAME`; `usage` and `summary` feed `%mcp help`."""

    def register(fn: Callable[[list[str]], Any]) -> Callable[[list[str]], Any]:
        SUBCOMMANDS[name] = Subcommand(name, usage, summary, fn)
        return fn

    return register


def help_text() -> str:
    lines = ["%mcp: talk to Model Context Protocol servers from this notebook.", ""]
    for sub in SUBCOMMANDS.values():
        lines.append(f"  %mcp {sub.name} {sub.usage}".rstrip())
        lines.append(f"        {sub.summary}")
    lines += [
        "  %mcp help",
        "        this text",
        "",
        "NAME may be left out while exactly one connection is open. Server pings are answered",
        "on a background thread at once, even while a cell is busy. The same things from Python:",
        "mcp_notebook.connect(...), conn.ping(), conn.request(...), conn.health, conn.close().",
    ]
    return "\n".join(lines)


def run(line: str) -> Any:
    """Run one `%mcp` line; user mistakes raise CommandError."""
    try:
        args = shlex.split(line)
    except ValueError as exc:
        raise CommandError(f"cannot parse the line: {exc}") from None
    if not args or args[0] in ("help", "-h", "--help"):
        print(help_text())
        return None
    sub = SUBCOMMANDS.get(args[0])
    if sub is None:
        raise CommandError(f"unknown subcommand {args[0]!r}; try: {', '.join([*SUBCOMMANDS, 'help'])}")
    try:
        return sub.run(args[1:])
    except CommandError:
        raise
    except McpNotebookError as exc:
        raise CommandError(str(exc)) from None


class Parser(argparse.ArgumentParser):
    """argparse that raises CommandError with a one-line usage instead of exiting."""

    def __init__(self, name: str) -> None:
        super().__init__(prog=f"%mcp {name}", add_help=False)

    def error(self, message: str) -> NoReturn:
        usage = " ".join(self.format_usage().split()).removeprefix("usage: ")
        raise CommandError(f"{message}; usage: {usage}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise CommandError(message or " ".join(self.format_usage().split()))


def seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(text)
    return value


seconds.__name__ = "number of seconds"


def count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


count.__name__ = "count"


def pick(name: str | None) -> api.Connection:
    """The named connection, or the only open one."""
    if name is not None:
        return api.get_connection(name)
    open_ = api.connections()
    if len(open_) == 1:
        return next(iter(open_.values()))
    if not open_:
        raise CommandError("no open connection; start one with %mcp connect NAME -- COMMAND")
    raise CommandError(f"several connections are open ({', '.join(sorted(open_))}); name one")
