"""What a server frame breaks: the negotiated version's schema, and the rules a schema cannot say.

`FrameRules.check(seen)` takes one frame the server sent, with what the session knew when it
arrived (`Seen`: the request it answers, whether that was ours, both sides' capabilities), and
returns the `Violation`s it finds: the JSON-RPC envelope and the method's definition
(`schema`), a result that is not its method's result type (`result-shape`), a response to no
request of ours (`unmatched-response`), a request or notification the declared capabilities do
not cover (`capability`), a tool whose inputSchema/outputSchema is not JSON Schema
(`tool-schema`) or whose structuredContent breaks its outputSchema (`structured-content`), a
tool name listed twice (`duplicate-tool`), a tool whose `x-mcp-header` annotations break the
2026-07-28 HTTP transport's rules (`tool-header`, over HTTP only: the client leaves it out), a
nextCursor already seen in the same listing (`cursor-loop`), and stdout bytes that are no JSON-RPC
message (`not-json-rpc`); one rule is the HTTP transport's, as no frame shows it: an SSE event id
it cannot send back (`sse-event-id`). The object
keeps what later frames are judged by (the tools' output schemas, each listing's cursors), so
frames must reach it in the order they came. Pure: no I/O, no threads.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..base.public import public
from ..base.text import clip
from . import jsonrpc as rpc
from . import spec_schema as spec
from .tool_headers import header_problem
from .versions import LEGACY_VERSIONS

SCHEMA = "schema"
RESULT_SHAPE = "result-shape"
UNMATCHED = "unmatched-response"
CAPABILITY = "capability"
TOOL_SCHEMA = "tool-schema"
STRUCTURED = "structured-content"
DUPLICATE_TOOL = "duplicate-tool"
TOOL_HEADER = "tool-header"
CURSOR_LOOP = "cursor-loop"
NOT_JSON_RPC = "not-json-rpc"
EVENT_ID = "sse-event-id"
RULES = (
    SCHEMA,
    RESULT_SHAPE,
    UNMATCHED,
    CAPABILITY,
    TOOL_SCHEMA,
    STRUCTURED,
    DUPLICATE_TOOL,
    TOOL_HEADER,
    CURSOR_LOOP,
    NOT_JSON_RPC,
    EVENT_ID,
)

LISTINGS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list", "tasks/list")
# A server notification -> the server capability (path) that must be declared for it.
NOTIFICATION_NEEDS = {
    "notifications/resources/updated": ("resources", "subscribe"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/tools/list_changed": ("tools", "listChanged"),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/message": ("logging",),
}
# A server request -> the client capability it needs.
REQUEST_NEEDS = {"sampling/createMessage": "sampling", "roots/list": "roots", "elicitation/create": "elicitation"}
_PAGES = {
    "initialize": "basic/lifecycle",
    "ping": "basic/utilities/ping",
    "tools": "server/tools",
    "resources": "server/resources",
    "prompts": "server/prompts",
    "completion": "server/utilities/completion",
    "logging": "server/utilities/logging",
    "server": "server/discover",
    "subscriptions": "basic/patterns/subscriptions",
}


@public
@dataclass(frozen=True, slots=True)
class Violation:
    """One rule a frame broke: `index` is its trace entry's seq, `where` a JSON pointer into the
    frame, `rule` one of the rule names, `url` the spec section (where one applies), `side` the
    party that broke it ("server", or "client" where a tap watches both)."""

    index: int
    direction: str
    method: str | None
    where: str
    rule: str
    message: str
    url: str | None = None
    side: str = "server"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return f"#{self.index} {self.side} {self.method or '-'} {self.where or '/'}: {self.rule}: {self.message}"


class Seen(NamedTuple):
    """A server frame and what the session knew as it arrived."""

    seq: int
    kind: str
    message: Any  # the whole parsed frame (never the trace's clipped copy)
    version: str | None
    method: str | None = None  # a response's: the method of the request it answers
    params: Any = None  # a response's: the params of that request
    matched: bool = True  # a response: it answers a request of ours (in flight, or given up)
    problem: str | None = None  # an invalid frame: why
    server_capabilities: Any = None
    client_capabilities: Any = None
    stdio: bool = True  # the transport: stdio, or HTTP
    side: str = "server"  # who sent it: the server (a tap also checks the client's frames)


def url(version: str | None, section: str) -> str | None:
    if version is None:
        return None
    if version not in LEGACY_VERSIONS:  # 2026-07-28 moved and renamed some pages
        section = section.replace("basic/utilities/", "basic/patterns/").replace("basic/lifecycle", "basic/versioning")
        section = section.replace("basic/transports#", "basic/transports/")
    return f"https://modelcontextprotocol.io/specification/{version}/{section}"


def _page(method: str | None) -> str:
    return _PAGES.get((method or "").split("/")[0], "basic")


def _has(capabilities: Any, path: tuple[str, ...]) -> bool:
    """Whether the capability at `path` is declared: an object (`"logging": {}` counts) or true."""
    for key in path:
        if not isinstance(capabilities, dict) or capabilities.get(key) in (None, False):
            return False
        capabilities = capabilities[key]
    return True


class FrameRules:
    """The rules, and what they remember between frames of one connection. The class attributes
    name the sender's side; `client_rules.ClientFrameRules` judges the other one."""

    SIDE, DIRECTION = "server", "in"
    REQUESTS, NOTIFICATIONS = "ServerRequest", "ServerNotification"  # the schema's unions of what the sender sends
    ANSWERED = "ClientRequest"  # the union of the requests the sender answers
    UNMATCHED_TEXT = "a response whose id matches no request of ours"

    def __init__(self) -> None:
        self.output_schemas: dict[str, Any] = {}  # tool name -> its outputSchema, from the listings
        self._cursors: dict[str, set[str]] = {}  # listing method -> cursors seen since its first page
        self._tool_names: set[str] = set()

    def check(self, seen: Seen) -> list[Violation]:
        if seen.kind == rpc.INVALID and isinstance(seen.message, list) and seen.message:
            message = f"a JSON-RPC batch, which protocol {seen.version} does not allow (only 2025-03-26 does)"
            return [self._found(seen, "", SCHEMA, message, "basic")]
        if seen.kind == rpc.INVALID:
            problem = seen.problem or "not a JSON-RPC message"
            section = "basic/transports#stdio" if seen.stdio else "basic/transports#streamable-http"
            return [self._found(seen, "", NOT_JSON_RPC, f"not a JSON-RPC message: {problem}", section)]
        if seen.version not in spec.VERSIONS:
            return []
        if seen.kind == rpc.BATCH:
            found: list[Violation] = []
            for i, item in enumerate(seen.message):
                frame = rpc.classify(item)
                inner = seen._replace(kind=frame.kind, message=item, problem=frame.problem, method=frame.method)
                found += [dataclasses.replace(v, where=f"/{i}{v.where}") for v in self.check(inner)]
            return found
        if seen.kind in (rpc.REQUEST, rpc.NOTIFICATION):
            return self._request_or_notification(seen)
        return self._response(seen)

    def _found(self, seen: Seen, where: str, rule: str, message: str, section: str | None = None) -> Violation:
        link = url(seen.version, section or _page(seen.method))
        return Violation(seen.seq, self.DIRECTION, seen.method, where, rule, message, link, self.SIDE)

    def _schema(self, seen: Seen, instance: Any, name: str, rule: str, at: str = "") -> list[Violation]:
        version = seen.version
        assert version is not None
        return [self._found(seen, where, rule, message) for where, message in spec.errors(instance, version, name, at)]

    def _request_or_notification(self, seen: Seen) -> list[Violation]:
        request = seen.kind == rpc.REQUEST
        version, method = seen.version, seen.method
        assert version is not None
        found = self._schema(seen, seen.message, "JSONRPCRequest" if request else "JSONRPCNotification", SCHEMA)
        name = spec.union_members(version, self.REQUESTS if request else self.NOTIFICATIONS).get(method or "")
        if name is not None:
            found += self._schema(seen, seen.message, name, SCHEMA)
        if version in LEGACY_VERSIONS:
            found += self._capability(seen, request)
        return found

    def _capability(self, seen: Seen, request: bool) -> list[Violation]:
        method, section = seen.method or "", "basic/lifecycle#capability-negotiation"
        if request and method in REQUEST_NEEDS:
            needed = REQUEST_NEEDS[method]
            if not _has(seen.client_capabilities, (needed,)):
                message = f"{method} sent to a client that did not declare the {needed!r} capability"
                return [self._found(seen, "/method", CAPABILITY, message, section)]
        elif not request and method in NOTIFICATION_NEEDS:
            path = NOTIFICATION_NEEDS[method]
            if not _has(seen.server_capabilities, path):
                params = seen.message.get("params") if isinstance(seen.message, dict) else None
                about = f" (params {clip(json.dumps(params, default=str), 120)})" if params else ""
                message = f"{method} from a server that did not declare capabilities.{'.'.join(path)}{about}"
                return [self._found(seen, "/method", CAPABILITY, message, section)]
        return []

    def _response(self, seen: Seen) -> list[Violation]:
        version = seen.version
        assert version is not None
        result_env, error_env = spec.response_definitions(version)
        found = []
        if not seen.matched:
            found.append(self._found(seen, "/id", UNMATCHED, self.UNMATCHED_TEXT, "basic"))
        result = seen.message.get("result") if isinstance(seen.message, dict) else None
        typed = seen.kind == rpc.RESPONSE and seen.matched and seen.method is not None
        name = self._result_type(version, seen.method or "", seen.params, result) if typed else None
        if name is None or not isinstance(result, dict) or not spec.covers_result(version, name):
            found += self._schema(seen, seen.message, result_env if seen.kind == rpc.RESPONSE else error_env, SCHEMA)
        if not typed or found:
            return found
        if name is not None:
            found += self._schema(seen, result, name, RESULT_SHAPE, "/result")
        if not found and isinstance(result, dict):
            found += self._listing(seen, result)
            if seen.method == "tools/call" and name == "CallToolResult":
                found += self._structured(seen, result)
        return found

    def _result_type(self, version: str, method: str, params: Any, result: Any) -> str | None:
        defs = spec.definitions(version)
        if isinstance(result, dict):
            if result.get("resultType") == "input_required" and "InputRequiredResult" in defs:
                return "InputRequiredResult"
            if "task" in result and isinstance(params, dict) and "task" in params and "CreateTaskResult" in defs:
                return "CreateTaskResult"
        return spec.result_definition(version, method, self.ANSWERED)

    def _listing(self, seen: Seen, result: dict[str, Any]) -> list[Violation]:
        method = seen.method or ""
        if method not in LISTINGS:
            return []
        cursor = seen.params.get("cursor") if isinstance(seen.params, dict) else None
        if cursor is None:  # a first page: a new listing
            self._cursors[method] = set()
            if method == "tools/list":
                self._tool_names = set()
        cursors = self._cursors.setdefault(method, set())
        if isinstance(cursor, str):
            cursors.add(cursor)
        found: list[Violation] = []
        next_cursor = result.get("nextCursor")
        if isinstance(next_cursor, str) and next_cursor in cursors:
            message = f"nextCursor {next_cursor[:80]!r} was already given in this listing: paging would never end"
            found.append(self._found(seen, "/result/nextCursor", CURSOR_LOOP, message, "server/utilities/pagination"))
        elif isinstance(next_cursor, str):
            cursors.add(next_cursor)
        if method == "tools/list":
            found += self._tools(seen, result.get("tools") or [])
        return found

    def _tools(self, seen: Seen, tools: list[Any]) -> list[Violation]:
        found: list[Violation] = []
        for i, tool in enumerate(tools):
            name = tool.get("name")
            if name in self._tool_names:
                message = f"tool name {name!r} is listed twice"
                found.append(self._found(seen, f"/result/tools/{i}/name", DUPLICATE_TOOL, message))
            self._tool_names.add(name)
            problem = None if seen.stdio or seen.version in LEGACY_VERSIONS else header_problem(tool.get("inputSchema"))
            if problem is not None:
                message = f"tool {name!r}: {problem}; the client leaves the tool out"
                found.append(self._found(seen, f"/result/tools/{i}/inputSchema", TOOL_HEADER, message))
            for key in ("inputSchema", "outputSchema"):
                if key in tool:
                    problem = spec.json_schema_errors(tool[key])
                    if problem is not None:
                        message = f"tool {name!r}: {key} is not a valid JSON Schema: {problem}"
                        found.append(self._found(seen, f"/result/tools/{i}/{key}", TOOL_SCHEMA, message))
            if "outputSchema" in tool and spec.json_schema_errors(tool["outputSchema"]) is None:
                self.output_schemas[name] = tool["outputSchema"]
            else:
                self.output_schemas.pop(name, None)
        return found

    def _structured(self, seen: Seen, result: dict[str, Any]) -> list[Violation]:
        tool = seen.params.get("name") if isinstance(seen.params, dict) else None
        schema = self.output_schemas.get(tool) if isinstance(tool, str) else None
        if schema is None or result.get("isError"):
            return []
        if "structuredContent" not in result:
            message = f"tool {tool!r} declares an outputSchema but its result has no structuredContent"
            return [self._found(seen, "/result", STRUCTURED, message)]
        problems = spec.instance_errors(result["structuredContent"], schema, "/result/structuredContent")
        return [self._found(seen, where, STRUCTURED, f"tool {tool!r}: {message}") for where, message in problems]
