"""Resources and resource templates under `demo://`, and who hears when one changes.

Three resources (`demo://readme`, `demo://counter`, `demo://image`) and two templates
(`demo://greeting/{person}`, `demo://square/{n}`). The `bump` tool raises the counter and
sends `notifications/resources/updated` to every watcher of `demo://counter`: a legacy
session that sent `resources/subscribe` (on stdout, or its GET stream on HTTP), or a
modern `subscriptions/listen` request (on that request's own stream, tagged with its id).
An unknown URI is -32002 (resource not found) with the URI in `data`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from typing import Any
from urllib.parse import quote, unquote

from ..base.plural import counted
from ..protocol import jsonrpc as rpc
from ._app import App, Call, RpcError, Send
from ._png import demo_image

RESOURCE_NOT_FOUND = -32002
COUNTER = "demo://counter"
NAMES = ("Ada", "Alan", "Barbara", "Donald", "Edsger", "Grace", "Guido", "Katherine", "Linus", "Margaret", "Radia")
README = """\
# mcp-notebook demo server

Resources: `demo://readme` (this text), `demo://counter` (raised by the `bump` tool;
subscribe to hear of each change) and `demo://image` (a 16x16 PNG).
Templates: `demo://greeting/{person}` and `demo://square/{n}`.
Prompts: `greet` and `review`, whose arguments the server completes.
"""

RESOURCES: tuple[dict[str, Any], ...] = (
    {"uri": "demo://readme", "name": "readme", "description": "What this server offers.", "mimeType": "text/markdown"},
    {
        "uri": COUNTER,
        "name": "counter",
        "description": "A number the bump tool raises; subscribe to hear of each change.",
        "mimeType": "text/plain",
    },
    {"uri": "demo://image", "name": "image", "description": "A 16x16 PNG, as a blob.", "mimeType": "image/png"},
)
TEMPLATES: tuple[dict[str, Any], ...] = (
    {
        "uriTemplate": "demo://greeting/{person}",
        "name": "greeting",
        "description": "A greeting for {person} (the server completes names).",
        "mimeType": "text/plain",
    },
    {
        "uriTemplate": "demo://square/{n}",
        "name": "square",
        "description": "The square of the integer {n}, as JSON.",
        "mimeType": "application/json",
    },
)
GREETING = re.compile(r"^demo://greeting/([^/]+)$")
SQUARE = re.compile(r"^demo://square/(-?\d{1,9})$")


def known(uri: str) -> bool:
    return any(r["uri"] == uri for r in RESOURCES) or bool(GREETING.match(uri) or SQUARE.match(uri))


def read(app: App, uri: Any) -> dict[str, Any]:
    """The ReadResourceResult body for `uri`, or RpcError."""
    if not isinstance(uri, str):
        raise RpcError(rpc.INVALID_PARAMS, "resources/read needs a string uri")
    contents: dict[str, Any] = {"uri": uri}
    if uri == "demo://readme":
        contents.update(mimeType="text/markdown", text=README)
    elif uri == COUNTER:
        contents.update(mimeType="text/plain", text=str(app.counter))
    elif uri == "demo://image":
        contents.update(mimeType="image/png", blob=base64.b64encode(demo_image()).decode("ascii"))
    elif match := GREETING.match(uri):
        contents.update(mimeType="text/plain", text=f"Hello, {unquote(match.group(1))}!")
    elif match := SQUARE.match(uri):
        n = int(match.group(1))
        contents.update(mimeType="application/json", text=json.dumps({"n": n, "square": n * n}))
    else:
        raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
    return {"contents": [contents]}


def complete_template(uri_template: str, argument: str, value: str) -> list[str]:
    """Completion values for one variable of a template (empty for what we do not complete)."""
    if uri_template == "demo://greeting/{person}" and argument == "person":
        return [name for name in NAMES if name.lower().startswith(value.lower())]
    if uri_template == "demo://square/{n}" and argument == "n":
        return [str(n) for n in range(1, 13) if str(n).startswith(value)]
    return []


def greeting_uri(name: str) -> str:
    return f"demo://greeting/{quote(name, safe='')}"


async def bump(app: App, call: Call, by: int) -> dict[str, Any]:
    """The bump tool: raise the counter, tell its watchers."""
    app.counter += by
    told = await app.watchers.changed(COUNTER)
    text = f"counter is {app.counter}; {counted(told, 'subscriber')} told"
    return {"content": [{"type": "text", "text": text}]}


def subscribe(app: App, key: object, uris: set[str], call: Call, subscribe: bool, send: Send) -> dict[str, Any]:
    """Legacy `resources/subscribe` / `unsubscribe`: change the session's watched URIs."""
    uri = call.params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(rpc.INVALID_PARAMS, f"{call.method} needs a string uri")
    if subscribe:
        if not known(uri):
            raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        uris.add(uri)
    else:
        uris.discard(uri)
    if uris:
        app.watchers.watch(key, uris, send)
    else:
        app.watchers.forget(key)
    return {}


@contextlib.contextmanager
def watching(app: App, key: object, uris: set[str], send: Send, meta: dict[str, Any]) -> Any:
    """A modern `subscriptions/listen` request watches while it lasts."""
    app.watchers.watch(key, uris, send, meta)
    try:
        yield
    finally:
        app.watchers.forget(key)
