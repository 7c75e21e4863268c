"""Prompts, and `completion/complete` for prompt arguments and template variables.

`greet(name, style?)` and `review(code, language?)`. The server completes `name` (from a
list of computing pioneers), `style` and `language`, and the templates' variables
(`_resources.complete_template`). Completion filters by prefix, case-blind, and may use
the other arguments already given (`context.arguments`): with `style=pirate`, names come
back as "Cap'n <name>" suggestions too. A missing required argument is -32602.
"""

from __future__ import annotations

from typing import Any

from ..protocol import jsonrpc as rpc
from ._app import Call, RpcError
from ._resources import NAMES, complete_template, greeting_uri

STYLES = ("formal", "friendly", "pirate")
LANGUAGES = ("python", "javascript", "typescript", "rust", "go", "c", "sql")
MAX_VALUES = 100  # CompleteResult.completion.values holds at most 100

PROMPTS: tuple[dict[str, Any], ...] = (
    {
        "name": "greet",
        "description": "Greet someone, in a style.",
        "arguments": [
            {"name": "name", "description": "Who to greet (completed from a list of names).", "required": True},
            {"name": "style", "description": "formal, friendly or pirate (default friendly).", "required": False},
        ],
    },
    {
        "name": "review",
        "description": "Ask for a code review.",
        "arguments": [
            {"name": "code", "description": "The code to review.", "required": True},
            {"name": "language", "description": "Its language (completed).", "required": False},
        ],
    },
)
OPENINGS = {"formal": "Good day, {name}.", "friendly": "Hi {name}!", "pirate": "Ahoy, {name}!"}


def _arguments(call: Call, prompt: dict[str, Any]) -> dict[str, str]:
    given = call.params.get("arguments") or {}
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise RpcError(rpc.INVALID_PARAMS, "prompt arguments must be an object of strings")
    missing = [a["name"] for a in prompt["arguments"] if a["required"] and a["name"] not in given]
    if missing:
        raise RpcError(rpc.INVALID_PARAMS, f"prompt {prompt['name']!r} needs the argument(s): {', '.join(missing)}")
    return given


def get(call: Call) -> dict[str, Any]:
    """The GetPromptResult body, or RpcError."""
    name = call.params.get("name")
    prompt = next((p for p in PROMPTS if p["name"] == name), None)
    if prompt is None:
        raise RpcError(rpc.INVALID_PARAMS, f"Unknown prompt: {name!r}")
    args = _arguments(call, prompt)
    if name == "greet":
        style = args.get("style", "friendly")
        if style not in STYLES:
            raise RpcError(rpc.INVALID_PARAMS, f"style must be one of {', '.join(STYLES)}, not {style!r}")
        opening = OPENINGS[style].format(name=args["name"])
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": {"type": "text", "text": f"Write a short {style} greeting for {args['name']}."}},
            {"role": "assistant", "content": {"type": "text", "text": opening}},
        ]
        resource = {"uri": greeting_uri(args["name"]), "mimeType": "text/plain", "text": f"Hello, {args['name']}!"}
        messages.append({"role": "user", "content": {"type": "resource", "resource": resource}})
        return {"description": f"A {style} greeting for {args['name']}", "messages": messages}
    language = args.get("language", "")
    fence = f"```{language}\n{args['code']}\n```"
    text = f"Please review this {language or 'code'} and point out bugs and unclear names:\n\n{fence}"
    return {"description": "A code review request", "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


def _prompt_values(name: str, argument: str, value: str, context: dict[str, Any]) -> list[str]:
    prefix = value.lower()
    if name == "greet" and argument == "name":
        names = [n for n in NAMES if n.lower().startswith(prefix)]
        if context.get("style") == "pirate":
            names += [f"Cap'n {n}" for n in NAMES if f"cap'n {n.lower()}".startswith(prefix)]
        return names
    if name == "greet" and argument == "style":
        return [s for s in STYLES if s.startswith(prefix)]
    if name == "review" and argument == "language":
        return [lang for lang in LANGUAGES if lang.startswith(prefix)]
    return []


def complete(call: Call) -> dict[str, Any]:
    """The CompleteResult body for a prompt argument or a template variable."""
    ref, argument = call.params.get("ref"), call.params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise RpcError(rpc.INVALID_PARAMS, "completion/complete needs ref and argument objects")
    arg_name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(arg_name, str) or not isinstance(value, str):
        raise RpcError(rpc.INVALID_PARAMS, "argument.name and argument.value must be strings")
    context = call.params.get("context")
    given = context.get("arguments") if isinstance(context, dict) else None
    given = given if isinstance(given, dict) else {}
    if ref.get("type") == "ref/prompt":
        if not any(p["name"] == ref.get("name") for p in PROMPTS):
            raise RpcError(rpc.INVALID_PARAMS, f"Unknown prompt: {ref.get('name')!r}")
        values = _prompt_values(str(ref["name"]), arg_name, value, given)
    elif ref.get("type") == "ref/resource":
        values = complete_template(str(ref.get("uri")), arg_name, value)
    else:
        raise RpcError(rpc.INVALID_PARAMS, f"ref.type must be ref/prompt or ref/resource, not {ref.get('type')!r}")
    return {"completion": {"values": values[:MAX_VALUES], "total": len(values), "hasMore": len(values) > MAX_VALUES}}
