"""The tools a modern listing gave, as the session keeps them: each one's input schema (for the
`Mcp-Param-*` headers of its calls), and those left out for breaking the `x-mcp-header` rules.

The rule kept here (2026-07-28, Streamable HTTP transport): a tool whose input schema carries
an invalid `x-mcp-header` is excluded from the result of `tools/list` that every caller sees,
each exclusion is a `tool-excluded` trace event (once, until its reason changes) naming the tool and the reason, and a call
to an excluded tool is refused before it reaches the wire. Over stdio the annotations mean
nothing and every tool is kept. (The frame checker counts the same tool as the server's
violation, from the frame as it came.)
"""

from __future__ import annotations

from typing import Any, Protocol

from ..base.errors import ProtocolViolation
from ..protocol.tool_headers import header_problem
from ..transports.base import Transport
from .trace import Trace


class Owner(Protocol):
    """The session, as far as its listed tools need it: its transport's kind, and its trace."""

    transport: Transport
    trace: Trace


class ListedTools:
    """One connection's modern tools listing, for headers and exclusions."""

    def __init__(self, session: Owner) -> None:
        self.session = session
        self.schemas: dict[str, dict[str, Any]] = {}
        self.excluded: dict[str, str] = {}  # tool name -> why it was left out
        self._told: dict[str, str] = {}  # each exclusion announced, by tool: told again only if its reason changes
        self._untold: list[str] = []  # exclusions no front end has shown yet

    def take(self, params: dict[str, Any] | None, result: dict[str, Any]) -> dict[str, Any]:
        """A complete `tools/list` page, its invalid tools left out (over HTTP)."""
        if not (params or {}).get("cursor"):  # a first page: a new listing
            self.excluded = {}
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        kept = []
        check = self.session.transport.kind != "stdio"
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                kept.append(tool)
                continue
            name, schema = tool["name"], tool.get("inputSchema")
            problem = header_problem(schema) if check else None
            if problem is None:
                self.schemas[name] = schema if isinstance(schema, dict) else {}
                self.excluded.pop(name, None)
                kept.append(tool)
                continue
            self.schemas.pop(name, None)
            if self._told.get(name) != problem:
                self._told[name] = problem
                self.session.trace.event("tool-excluded", f"{name}: {problem}", tool=name, reason=problem)
                self._untold.append(f"tool {name!r} left out of the listing: {problem} (2026-07-28 transports)")
            self.excluded[name] = problem
        return result if len(kept) == len(tools) else {**result, "tools": kept}

    def refuse(self, method: str, params: dict[str, Any] | None) -> None:
        """Raise ProtocolViolation for a call to a tool the listing left out."""
        name = (params or {}).get("name") if method == "tools/call" else None
        problem = self.excluded.get(name) if isinstance(name, str) else None
        if problem is not None:
            raise ProtocolViolation(f"tools/call: tool {name!r} was left out of the listing: {problem}")

    def untold(self) -> list[str]:
        """The exclusions not yet shown to anyone, each once (a front end shows them as warnings)."""
        told, self._untold = self._untold, []
        return told
