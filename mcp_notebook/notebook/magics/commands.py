"""The `%mcp` subcommand registry, and the parser pieces subcommands share.

Subcommands are plain functions of their parsed arguments; they know nothing of IPython
(the magic in `magics.mcp` turns their mistakes into one-line UsageErrors; the API's other
errors keep their own type, and show as one line too). Each feature
registers its own subcommands from its own module with `@subcommand`, naming the options
its parser takes. The rule kept here: usage lines and `%mcp help` are made from those
parsers, never written by hand, and every subcommand that works on an open connection
names it the same way, `-c/--conn NAME`, optional while exactly one connection is open
(`connection`, `connection_of`; `connections_of` for those that speak of every connection
when none is named).
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn

from ...api.connecting import connect as api
from ...api.connection import Connection
from ...base.errors import UsageError
from ...base.text import TEXT_WIDTH, wrapped
from . import words


class CommandError(UsageError):
    """A user mistake in a `%mcp` line; shown as one line, never a traceback."""


class ShowHelp(Exception):
    """`-h/--help` was given: show this text instead of running the subcommand."""


class _Refused(Exception):
    """argparse refused the words; the usage is added once it has finished parsing."""


class _HelpAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        raise ShowHelp(parser.format_help())


WIDTH = TEXT_WIDTH  # of `%mcp help`: notebook output does not know the width of a terminal
_Formatter = partial(argparse.HelpFormatter, width=WIDTH)


class Parser(argparse.ArgumentParser):
    """argparse that raises CommandError with a one-line usage instead of exiting."""

    def __init__(self, name: str, summary: str = "", epilog: str | None = None, bare: str | None = None) -> None:
        super().__init__(prog=f"%mcp {name}", description=summary, epilog=epilog, add_help=False, formatter_class=_Formatter)
        self.add_argument("-h", "--help", action=_HelpAction, nargs=0, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        self.connection: str | None = None  # "option", or "positional" when a leading NAME may name it too
        self.or_other: str | None = None  # the dest a leading NAME goes to when --conn names the connection
        self.trailing: str | None = None  # the dest that takes the words after `--`
        self.bare = bare  # what to say when given no arguments at all
        self._parsing = False

    def usage_line(self, prefix: str = "") -> str:
        """The generated usage, wrapped as argparse wraps it, after `prefix` instead of "usage: "."""
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups, prefix=prefix)
        return formatter.format_help().rstrip("\n")

    def parse_args(self, args: Sequence[str] | None = None) -> argparse.Namespace:  # type: ignore[override]
        args = list(args or ())
        if not args and self.bare:
            raise CommandError(self.bare)
        rest = None
        if self.trailing and "--" in args:
            args, rest = args[: args.index("--")], args[args.index("--") + 1 :]
        if "-h" in args or "--help" in args:  # before parsing: the intermixed parse hides positionals from help
            raise ShowHelp(self.format_help())
        self._parsing = True
        try:
            return self._parse(args, rest)
        except _Refused as refused:  # the usage is made once argparse has put its positionals back
            raise CommandError(f"{refused}; usage: {' '.join(self.usage_line().split())}") from None
        finally:
            self._parsing = False

    def _parse(self, args: list[str], rest: list[str] | None) -> argparse.Namespace:
        ns = super().parse_intermixed_args(args)  # options anywhere: between a tool and its pairs too
        if self.trailing:
            if getattr(ns, self.trailing):
                self.error(f"unrecognized arguments: {' '.join(getattr(ns, self.trailing))}")
            setattr(ns, self.trailing, rest)  # None without `--`; [] with nothing after it
        if self.connection == "positional":
            name = vars(ns).pop("name")
            if self.or_other:
                setattr(ns, self.or_other, None)
            if name is not None and ns.conn is not None and name != ns.conn:
                if not self.or_other:
                    self.error(f"{name!r} and --conn {ns.conn!r} name different connections; give one")
                setattr(ns, self.or_other, name)  # `%mcp tools -c ev get-sum`: NAME is the tool
                name = None
            ns.conn = ns.conn or name
        return ns

    def error(self, message: str) -> NoReturn:
        if self._parsing:
            raise _Refused(message)  # parse_args adds the usage
        raise CommandError(f"{message}; usage: {' '.join(self.usage_line().split())}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise CommandError(message or " ".join(self.format_usage().split()))


Option = Callable[[Any], object]  # adds arguments to a Parser (or to a group of one)
Run = Callable[..., Any]


@dataclass(frozen=True)
class Subcommand:
    name: str
    parser: Parser
    run: Run

    @property
    def summary(self) -> str:
        return self.parser.description or ""


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(
    name: str, summary: str, *options: Option, epilog: str | None = None, bare: str | None = None
) -> Callable[[Run], Run]:
    """Register `fn(ns)` as `%mcp NAME`, `ns` parsed by a parser that takes `options`.

    `summary` is the line `%mcp help` shows under the usage; `epilog` ends the full help
    (`%mcp help NAME`); `bare` replaces argparse's complaint when no argument is given.
    """
    parser = Parser(name, summary, epilog, bare)
    for option in options:
        option(parser)

    def register(fn: Run) -> Run:
        SUBCOMMANDS[name] = Subcommand(name, parser, fn)
        return fn

    return register


# ----- options that several subcommands take


def arg(*flags: str, **kwargs: Any) -> Option:
    """One argparse argument: `arg("--last", type=count)`."""
    return lambda parser: parser.add_argument(*flags, **kwargs)


def flag(*flags: str, help: str | None = None) -> Option:
    return arg(*flags, action="store_true", help=help)


def exclusive(*options: Option) -> Option:
    """Options of which at most one may be given."""

    def add(parser: Parser) -> None:
        group = parser.add_mutually_exclusive_group()
        for option in options:
            option(group)

    return add


def connection(positional: bool = False, or_other: str | None = None) -> Option:
    """`-c/--conn NAME`: the open connection to work on; `connection_of(ns)` finds it.

    With `positional`, a leading NAME may name it as well (`%mcp ping demo`); given both,
    they must agree, unless `or_other` names the dest NAME then goes to (`%mcp tools -c ev
    get-sum`: the tool).
    """

    def add(parser: Parser) -> None:
        parser.add_argument("-c", "--conn", metavar="NAME", help="the connection; may be left out while only one is open")
        if positional:
            parser.add_argument("name", nargs="?", help="the connection, as -c/--conn NAME")
        parser.connection = "positional" if positional else "option"
        parser.or_other = or_other

    return add


def connection_of(ns: argparse.Namespace) -> Connection:
    """The connection a parsed `%mcp` line names, or the only open one."""
    return pick(ns.conn)


def connections_of(ns: argparse.Namespace, *, one: bool = False) -> list[Connection]:
    """The connection a parsed `%mcp` line names, or the only open one; with none named and
    several open, every connection (none if none is open), unless `one` asks for exactly one."""
    if ns.conn or one or len(api.connections()) == 1:
        return [pick(ns.conn)]
    return list(api.connections().values())


def tap_of(ns: argparse.Namespace) -> Any | None:
    """The open tap a parsed line names where no connection has that name, or, with nothing
    named and no connection listed, the only open tap; None otherwise (a connection's line)."""
    from ...taps import registry as taps

    listed = api.connections()
    if ns.conn is not None:
        return taps.find(ns.conn) if ns.conn not in listed else None
    open_taps = taps.taps()
    return next(iter(open_taps.values())) if not listed and len(open_taps) == 1 else None


def after_dashes(dest: str, metavar: str, help: str) -> Option:
    """The words after `--`, as they are (none of them is an option of ours)."""

    def add(parser: Parser) -> None:
        parser.add_argument(dest, nargs="*", default=[], metavar=f"-- {metavar}", help=help)
        parser.trailing = dest

    return add


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


def timeout(help: str, default: float | None = None) -> Option:
    return arg("--timeout", type=seconds, metavar="S", default=default, help=help)


def last(help: str, default: int | None = None) -> Option:
    return arg("--last", type=count, metavar="N", default=default, help=help)


def save(what: str) -> Option:
    return arg("--save", metavar="PATH", help=f"write the {what} to PATH as JSON lines")


def pairs(metavar: str, help: str) -> Option:
    return arg("pairs", nargs="*", default=[], metavar=metavar, help=help)


def key_values(words: list[str]) -> dict[str, str]:
    """`key=value` words as a mapping of strings (a template's variables, a prompt's arguments)."""
    out = {}
    for pair in words:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"arguments are key=value pairs; {pair!r} is not one")
        out[key] = value
    return out


LIVE = flag("--live", help="a live view that follows new entries (in Jupyter; a snapshot elsewhere)")
REFRESH = flag("--refresh", help="ask the server again instead of showing the cached list")


# ----- running a line


def pick(name: str | None) -> Connection:
    """The named connection, or the only open one (or the only one, closed by its server)."""
    if name is not None:
        if name.isdigit() and name not in api.connections():  # `-c 3`, as Unix ping counts
            raise CommandError(f"no connection named {name!r}: -c (--conn) names a connection; a count is -n N")
        return api.get_connection(name)
    listed = api.connections()
    open_ = {n: c for n, c in listed.items() if not c.closed}
    if len(open_) > 1:
        raise CommandError(f"several connections are open ({', '.join(sorted(open_))}); name one with --conn NAME")
    for group in (open_, listed):
        if len(group) == 1:
            return next(iter(group.values()))
    if not listed:
        raise CommandError("no open connection; start one with %mcp connect NAME -- COMMAND")
    raise CommandError(f"no open connection; closed by their servers: {', '.join(sorted(listed))}; name one with --conn NAME")


def split(line: str) -> list[str]:
    """The words of a line: shell quoting, and JSON values written as they are (`words`)."""
    try:
        return words.split(line)
    except ValueError as exc:
        raise CommandError(f"cannot parse the line: {exc}") from None


def run(line: str) -> Any:
    """Run one `%mcp` line; user mistakes raise CommandError."""
    return dispatch(split(line))


def dispatch(args: list[str], **extra: Any) -> Any:
    """Run `%mcp ARGS...`; `extra` goes to the subcommand's function (a `%%mcp` cell body)."""
    if not args or args[0] in ("-h", "--help"):
        args = ["help"]
    sub = SUBCOMMANDS.get(args[0])
    if sub is None:
        raise _unknown(args[0])
    try:
        return sub.run(sub.parser.parse_args(args[1:]), **extra)
    except ShowHelp as shown:
        print(str(shown).rstrip("\n"))
        return None
    except CommandError:
        raise
    except UsageError as exc:  # the API's word for a mistake in the line: the magic's own one-line error
        raise CommandError(str(exc)) from None


@subcommand("help", "this text; with a SUBCOMMAND, its options in full", arg("subcommand", nargs="?"))
def _help(ns: argparse.Namespace) -> None:
    print(help_text(ns.subcommand))


LISTED_FIRST = ("connect", "ping", "status", "disconnect")  # what a newcomer needs first


def _listed() -> list[Subcommand]:
    """The subcommands as help lists them: connecting first, help last, the rest as registered."""

    def place(sub: Subcommand) -> tuple[int, int]:
        first = LISTED_FIRST.index(sub.name) if sub.name in LISTED_FIRST else len(LISTED_FIRST)
        return (sub.name == "help", first)

    return sorted(SUBCOMMANDS.values(), key=place)


def _unknown(name: str) -> CommandError:
    """One short line (the whole list ran past any notebook's width): the names close to `name`."""
    close = difflib.get_close_matches(name, [sub.name for sub in _listed()], n=3, cutoff=0.7)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return CommandError(f"unknown subcommand {name!r}; {hint}%mcp help lists them all")


def help_text(name: str | None = None) -> str:
    """The list of subcommands, or with `name`, that subcommand's full help."""
    if name is not None:
        if name not in SUBCOMMANDS:
            raise _unknown(name)
        return SUBCOMMANDS[name].parser.format_help().rstrip("\n")
    lines = ["%mcp: talk to Model Context Protocol servers from this notebook.", ""]
    for sub in _listed():
        lines += [
            sub.parser.usage_line(prefix="  "),
            wrapped(sub.summary, indent=" " * 8),
        ]
    leading = ", ".join(sub.name for sub in SUBCOMMANDS.values() if sub.parser.connection == "positional")
    notes = [
        "Every subcommand that works on an open connection names it with -c/--conn NAME, which may be left out "
        f"while exactly one connection is open. These take the name without the option too (the [name] in their "
        f"usage): {leading}; given both ways, the names must agree. `%mcp connect NAME` names a new connection.",
        "`%mcp help SUBCOMMAND` or `%mcp SUBCOMMAND --help` shows a subcommand's options in full.",
        "Server pings are answered on a background thread at once, even while a cell is busy. The same things "
        "from Python: mcp_notebook.connect(...), conn.ping(), conn.request(...), conn.health, conn.close().",
    ]
    return "\n".join(lines + [f"\n{wrapped(note)}" for note in notes])
