"""Asking the client in the middle of a tool call: elicitation and sampling, in either era.

Legacy: a server request (`elicitation/create`, `sampling/createMessage`) goes out on the
call's own channel (stdout; the request's SSE stream on HTTP) and the tool waits for the
client's response, which the session routes here by its id (`Questions.answered`).
Modern (2026-07-28) has no server requests: the tool call is answered with an
`input_required` result naming what it needs (`InputRequired`), and the client calls
again with `inputResponses`; the retry is served afresh, nothing is kept between rounds.

A client that did not declare the capability gets a tool error (legacy) or -32021
MissingRequiredClientCapability (modern), before anything is asked.
"""

from __future__ import annotations

from typing import Any

import anyio

from ..protocol import jsonrpc as rpc
from ._app import Call, Outbox, RpcError, ToolError, log

MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
ANSWER_TIMEOUT = 600.0  # seconds a question waits for the user before the tool gives up
MAX_WAITING = 100


class InputRequired(Exception):
    """Modern: answer the call with `input_required` and these input requests."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__("input required")
        self.requests = requests


class Questions:
    """A legacy session's questions to its client: sent as server requests, answered by id."""

    def __init__(self) -> None:
        self._waiting: dict[str, tuple[anyio.Event, list[dict[str, Any]]]] = {}
        self._number = 0

    async def ask(self, outbox: Outbox, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send `method` to the client on `outbox`; its result, or ToolError for an error answer."""
        if len(self._waiting) >= MAX_WAITING:
            raise ToolError(f"{MAX_WAITING} questions to the client are already waiting")
        self._number += 1
        request_id = f"demo-ask-{self._number}"
        done, answer = anyio.Event(), list[dict[str, Any]]()
        self._waiting[request_id] = (done, answer)
        try:
            await outbox.send(rpc.request(request_id, method, params))
            with anyio.move_on_after(ANSWER_TIMEOUT):
                await done.wait()
        finally:
            self._waiting.pop(request_id, None)
        if not answer:
            raise ToolError(f"the client did not answer {method} within {ANSWER_TIMEOUT:g} s")
        reply = answer[0]
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            raise ToolError(f"the client refused {method}: {error.get('message')} ({error.get('code')})")
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def answered(self, message: dict[str, Any]) -> bool:
        """Take a client response if it answers one of our questions."""
        request_id = message.get("id")
        waiting = self._waiting.get(request_id) if isinstance(request_id, str) else None
        if waiting is None:
            return False
        done, answer = waiting
        answer.append(message)
        done.set()
        return True


def _require(call: Call, capability: str, method: str) -> None:
    if capability in call.client_capabilities:
        return
    text = f"{method} needs the client's {capability} capability, which this client did not declare"
    if call.modern:
        raise RpcError(MISSING_REQUIRED_CLIENT_CAPABILITY, text, {"requiredCapabilities": {capability: {}}})
    raise ToolError(text)


async def ask(call: Call, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The client's answer to `method`, in the call's era (see the module docstring)."""
    if call.modern:
        responses = call.params.get("inputResponses")
        answer = responses.get(key) if isinstance(responses, dict) else None
        if isinstance(answer, dict):
            return answer
        raise InputRequired({key: {"method": method, "params": params}})
    if call.ask_client is None:
        raise ToolError(f"no channel to send {method} on")
    return await call.ask_client(method, params)


NAME_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1},
        "colour": {"type": "string", "title": "Favourite colour", "enum": ["red", "green", "blue"], "default": "green"},
    },
    "required": ["name"],
}


async def ask_name(call: Call, args: dict[str, Any]) -> dict[str, Any]:
    """The ask_name tool: an elicitation (form mode) for a name and a colour."""
    _require(call, "elicitation", "elicitation/create")
    params: dict[str, Any] = {"message": "Who is there?", "requestedSchema": NAME_SCHEMA}
    if call.at_least("2025-11-25"):
        params["mode"] = "form"
    answer = await ask(call, "name", "elicitation/create", params)
    action = answer.get("action")
    if action != "accept":
        return {"content": [{"type": "text", "text": f"no name: the user chose {action!r}"}]}
    content = answer.get("content")
    content = content if isinstance(content, dict) else {}
    name, colour = content.get("name"), content.get("colour", "green")
    if not isinstance(name, str) or not name:
        raise ToolError(f"the answer has no name: {content!r}")
    log(f"ask_name: the user is {name!r}")
    return {"content": [{"type": "text", "text": f"Hello, {name}! ({colour} is a fine colour.)"}]}


def _max_tokens(args: dict[str, Any]) -> int:
    value = args.get("max_tokens", 100)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        raise ToolError(f"max_tokens must be an integer from 1 to 10000, not {value!r}")
    return value


async def summarize(call: Call, args: dict[str, Any]) -> dict[str, Any]:
    """The summarize tool: asks the client's model (sampling) to summarise `text`."""
    text = args.get("text")
    if not isinstance(text, str) or not text:
        raise ToolError("text must be a non-empty string")
    _require(call, "sampling", "sampling/createMessage")
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": f"Summarise in one sentence:\n\n{text}"}}],
        "systemPrompt": "You are a concise assistant.",
        "maxTokens": _max_tokens(args),
    }
    answer = await ask(call, "summary", "sampling/createMessage", params)
    content = answer.get("content")
    said = content.get("text") if isinstance(content, dict) else None
    if not isinstance(said, str):
        raise ToolError(f"the client's model sent no text: {answer!r}")
    return {"content": [{"type": "text", "text": f"{answer.get('model', 'the model')} says: {said}"}]}
