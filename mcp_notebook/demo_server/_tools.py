"""The demo tools: their definitions for `tools/list` and what `tools/call` runs.

Tools return a CallToolResult body (era decoration such as `resultType` is added by
the era's handler). Bad arguments are tool execution errors (`isError: true`, so a
model could correct itself); an unknown tool is a JSON-RPC error (-32602).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..base.plural import counted
from ..protocol import jsonrpc as rpc
from . import _asking, _faults, _resources, _ui_app
from ._app import LOG_LEVELS, App, Call, RpcError, ToolError, crash, log
from ._png import demo_image

MALFORMED_FRAME = '{"jsonrpc": "2.0", "method": this is not JSON'
STRUCTURED_SINCE = "2025-06-18"  # structuredContent and outputSchema


TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "echo",
        "description": "Return the text it is given.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
    },
    {
        "name": "slow",
        "description": (
            "Sleep for `seconds` in `steps` equal steps, sending notifications/progress after each "
            "step when the request has a progressToken. Stops when cancelled."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0, "maximum": 3600, "default": 5},
                "steps": {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 5},
            },
        },
    },
    {
        "name": "image",
        "description": "Return a small PNG image (16x16) as image content.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "log",
        "description": "Send one log message (notifications/message) at `level`, if the client wants that level.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "level": {"type": "string", "enum": list(LOG_LEVELS), "default": "info"},
            },
            "required": ["message"],
        },
    },
    {
        "name": "bump",
        "description": "Raise the demo://counter resource by `by` and tell its subscribers (notifications/resources/updated).",
        "inputSchema": {"type": "object", "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1}}},
    },
    {
        "name": "ask_name",
        "description": "Ask the user for a name and a colour (elicitation, form mode), then greet them.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "summarize",
        "description": "Ask the client's model to summarise `text` in one sentence (sampling).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "max_tokens": {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 100},
            },
            "required": ["text"],
        },
    },
    {
        "name": "drop_stream",
        "description": (
            "Legacy HTTP: close this request's SSE stream, wait `seconds`, then answer; the answer reaches a "
            "client that resumes the stream (GET with Last-Event-ID)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 60, "default": 0.5}},
        },
    },
    {
        "name": "faults",
        "description": (
            "Switch wire faults on and off; returns the fault settings, the counters and what it did. "
            "Call it with no arguments to read them."
        ),
        "inputSchema": {"type": "object", "properties": {spec.name: spec.json_schema() for spec in _faults.SPECS}},
    },
)


def tool_list(version: str) -> list[dict[str, Any]]:
    """The tool definitions as `version` knows them (no outputSchema before 2025-06-18)."""
    if version >= STRUCTURED_SINCE:
        return [dict(tool) for tool in TOOLS]
    return [{key: value for key, value in tool.items() if key != "outputSchema"} for tool in TOOLS]


def text_result(call: Call, text: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if structured is not None and call.at_least(STRUCTURED_SINCE):
        result["structuredContent"] = structured
    return result


def _number(args: dict[str, Any], name: str, default: float | None = None, lo: float = -1e308, hi: float = 1e308) -> Any:
    value = args.get(name, default)
    if value is None:
        raise ToolError(f"missing argument {name!r}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"{name} must be a number, not {value!r}")
    if not lo <= value <= hi:
        raise ToolError(f"{name} must be between {lo:g} and {hi:g}, not {value!r}")
    return value


async def _echo(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    text = args.get("text")
    if not isinstance(text, str):
        raise ToolError(f"text must be a string, not {text!r}")
    return text_result(call, text)


async def _add(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    total = _number(args, "a") + _number(args, "b")
    return text_result(call, repr(total), {"sum": total})


async def _slow(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    seconds = _number(args, "seconds", 5, 0, 3600)
    steps = _number(args, "steps", 5, 1, 10_000)
    if not isinstance(steps, int):
        raise ToolError(f"steps must be an integer, not {steps!r}")
    for step in range(1, steps + 1):
        await anyio.sleep(seconds / steps)
        await call.progress(step, steps, f"step {step}/{steps}")
    return text_result(call, f"slept {seconds:g} s in {counted(steps, 'step')}")


async def _image(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    data = base64.b64encode(demo_image()).decode("ascii")
    return {"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}


async def _log(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    message, level = args.get("message"), args.get("level", "info")
    if not isinstance(message, str):
        raise ToolError(f"message must be a string, not {message!r}")
    if level not in LOG_LEVELS:
        raise ToolError(f"level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    if not call.wants_log(level):
        return text_result(call, f"not sent: the client does not want {level} messages")
    await call.notify("notifications/message", {"level": level, "logger": "demo-server", "data": message})
    return text_result(call, f"sent at {level}")


async def _bump(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    by = _number(args, "by", 1, 1, 1000)
    if not isinstance(by, int):
        raise ToolError(f"by must be an integer, not {by!r}")
    return await _resources.bump(app, call, by)


async def _ask_name(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    return await _asking.ask_name(call, args)


async def _summarize(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    return await _asking.summarize(call, args)


async def _drop_stream(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    seconds = _number(args, "seconds", 0.5, 0, 60)
    if call.drop_stream is None:
        raise ToolError("no stream to drop: streams are resumable on HTTP in the legacy era only")
    await call.drop_stream()
    await anyio.sleep(seconds)
    return text_result(call, "after the drop")


async def _faults_tool(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    try:
        actions = app.faults.update(args)
    except _faults.FaultError as exc:
        raise ToolError(str(exc)) from None
    done = await fire(call, actions)
    report = {
        "faults": app.faults.settings(),
        "armed": dict(app.faults.armed),
        "counters": app.counters.as_dict(),
        "done": done,
    }
    return text_result(call, json.dumps(report), report)


async def fire(call: Call, actions: dict[str, Any]) -> list[str]:
    """Perform one-shot fault actions within `call`; say what was done."""
    if actions.get("crash"):
        crash(f"crash fault during {call.method} id={call.id!r}")
    done = []
    if actions.get("malformed"):
        await call.outbox.send_text(MALFORMED_FRAME)
        done.append("malformed: sent one frame that is not JSON")
    count = actions.get("flood", 0)
    if count and call.wants_log("info"):
        for n in range(1, count + 1):
            params = {"level": "info", "logger": "demo-server", "data": f"flood {n}/{count}"}
            await call.notify("notifications/message", params)
        done.append(f"flood: sent {count} notifications/message")
    elif count:
        done.append(
            "flood: sent none: level info is not wanted (modern: the request has no "
            "_meta io.modelcontextprotocol/logLevel; legacy: logging/setLevel is above info)"
        )
    if actions.get("expire_session"):
        if call.expire_session is not None:
            call.after_response.append(call.expire_session)
            done.append("expire_session: the session ends after this response")
        else:
            done.append("expire_session: no session to expire (sessions exist on HTTP in the legacy era only)")
    return done


ToolFunction = Callable[[App, Call, dict[str, Any]], Awaitable[dict[str, Any]]]
FUNCTIONS: dict[str, ToolFunction] = {
    "echo": _echo,
    "add": _add,
    "slow": _slow,
    "image": _image,
    "log": _log,
    "bump": _bump,
    "ask_name": _ask_name,
    "summarize": _summarize,
    "drop_stream": _drop_stream,
    "faults": _faults_tool,
}


async def call_tool(app: App, call: Call) -> dict[str, Any]:
    """Run `tools/call`; the CallToolResult body, or RpcError for an unknown tool."""
    name = call.params.get("name")
    function = (FUNCTIONS.get(name) or _ui_app.FUNCTIONS.get(name)) if isinstance(name, str) else None
    if function is None:
        raise RpcError(rpc.INVALID_PARAMS, f"Unknown tool: {name!r}")
    arguments = call.params.get("arguments")
    if arguments is None:
        arguments = {}
    armed = app.faults.take_armed()
    if armed:
        for note in await fire(call, armed):
            log(f"armed fault, first tools/call: {note}")
    try:
        if not isinstance(arguments, dict):
            raise ToolError("arguments must be an object")
        return await function(app, call, arguments)
    except ToolError as exc:
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
