"""URLElicitationRequiredError (-32042): the server needs the user to open a URL first.

The error lists URL-mode elicitations. We ask for each one as the connection's
`elicitation=` setting says (a callback, or the user in the cell), take the server's
`notifications/elicitation/complete` as the user's "done", and retry the request once
when every one was accepted. Otherwise the caller gets `UrlElicitationRequired`, which
names the URLs. (Spec 2025-11-25, Client Features, Elicitation: URL Elicitation Required
Error.)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from ...base.errors import McpError
from ...base.public import public
from .answers import Question, ServerRequests

URL_ELICITATION_REQUIRED = -32042
TICK = 0.05

T = TypeVar("T")


@public
class UrlElicitationRequired(McpError):
    """The server needs URLs opened before it answers, and they were not all accepted."""

    def __init__(self, error: McpError, elicitations: list[dict[str, Any]], why: str) -> None:
        urls = ", ".join(str(e.get("url")) for e in elicitations) or "none given"
        super().__init__(error.code, f"{error.message}; open {urls} ({why})", error.data, method=error.method)
        self.elicitations = elicitations


def required_elicitations(error: McpError) -> list[dict[str, Any]] | None:
    """The URL elicitations a -32042 error asks for; None for any other error."""
    if error.code != URL_ELICITATION_REQUIRED:
        return None
    data = error.data if isinstance(error.data, dict) else {}
    listed = data.get("elicitations")
    return [
        dict(e, mode="url")
        for e in (listed if isinstance(listed, list) else [])
        if isinstance(e, dict) and isinstance(e.get("url"), str)
    ]


def _questions(requests: ServerRequests, elicitations: list[dict[str, Any]], connection: str) -> list[Question]:
    questions = []
    for params in elicitations:
        question = Question("elicitation", params, connection)
        question.when_completed(question.accept)  # the server saying "done" is the user's accept
        requests.await_completion(question)
        questions.append(question)
    return questions


def _verdict(requests: ServerRequests, questions: list[Question]) -> str | None:
    """None when every question was accepted; else why not."""
    if requests.elicitation is None:
        return "this connection declared no elicitation: connect with elicitation=True or a callback"
    if requests.elicitation == "defaults":
        return 'elicitation="defaults" does not open URLs'
    for question in questions:
        answer = question.future.result() if question.answered else None
        refused = question.url_check.refused
        if refused is not None and (not answer or answer.get("action") != "accept"):
            return f"the URL {question.url_check.url} was refused: {refused}"
        if not answer or answer.get("action") != "accept":
            return f"{(answer or {}).get('action', 'no answer')} by the user"
    return None


def _ask_callback(requests: ServerRequests, question: Question, call: Callable[..., Any]) -> None:
    from .answers import _call_user

    value = call(_call_user, requests.elicitation, question.params)
    action = value.get("action", "accept") if isinstance(value, dict) else "decline"
    question.accept() if action == "accept" else question.decline()


def retry(
    error: McpError, send: Callable[[], T], requests: ServerRequests, connection: str, show: Callable[[Question], None]
) -> T:
    """After `send()` failed with -32042 (`error`): ask for the URLs and send once more (in the caller's thread)."""
    from ...runtime import get_runtime

    elicitations = required_elicitations(error) or []
    questions = _questions(requests, elicitations, connection)
    for question in questions:
        if callable(requests.elicitation):
            _ask_callback(requests, question, get_runtime().call)
        elif requests.elicitation is True:
            show(question)
            deadline = time.monotonic() + requests.answer_timeout
            try:
                while not question.future.done() and time.monotonic() < deadline:
                    question.completed.wait(TICK)
            except KeyboardInterrupt:
                question.cancel()
                raise
        question.cancel()  # no-op once answered
    why = _verdict(requests, questions)
    if why is not None:
        raise UrlElicitationRequired(error, elicitations, why) from None
    return send()


async def aretry(
    error: McpError, send: Callable[[], Awaitable[T]], requests: ServerRequests, connection: str, show: Callable[[Question], None]
) -> T:
    """The async twin of `retry`: waiting for the user does not block the caller's loop."""
    from ...runtime import get_runtime

    elicitations = required_elicitations(error) or []
    questions = _questions(requests, elicitations, connection)
    for question in questions:
        if callable(requests.elicitation):
            await anyio.to_thread.run_sync(_ask_callback, requests, question, get_runtime().call)
        elif requests.elicitation is True:
            show(question)
            with anyio.move_on_after(requests.answer_timeout):
                while not question.future.done():
                    await anyio.sleep(TICK)
        question.cancel()
    why = _verdict(requests, questions)
    if why is not None:
        raise UrlElicitationRequired(error, elicitations, why) from None
    return await send()
