"""Answers to server requests: `roots/list`, `sampling/createMessage`, `elicitation/create`.

What the user configured at connect time decides the capabilities we declare and the
handlers we install: `roots=` (paths; True for the working directory), `sampling=` (a
callback, or True to ask the user), `elicitation=` (a callback, True to ask the user, or
"defaults" to accept with the schema's defaults). Asking the user means posting a
`Question` to the cell whose call is waiting; that cell's thread shows it (a widget in
Jupyter, prompts in a terminal). No answer in time: sampling is refused, elicitation
cancelled. In the handshake era, sampling and elicitation also run as tasks when the server
asks (`params.task`, 2025-11-25): see `task_receiver`. A URL a server asks a person to open
is checked first (`check_url`): only https, or http to this machine, can be accepted; its
host is shown apart, and a punycode host flagged.
"""

from __future__ import annotations

import inspect
import ipaddress
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from ...base.errors import McpError, UsageError
from ...protocol import jsonrpc as rpc
from ..calls.progress import Caller
from ..tools.validate import problems
from .task_receiver import TaskReceiver

ANSWER_TIMEOUT = 300.0  # seconds a question waits for the user
MAX_AWAITED = 100  # URL elicitations whose completion notice we still listen for
USER_REJECTED = -1  # the sampling spec's code for "User rejected sampling request"


@dataclass(frozen=True)
class UrlCheck:
    """What a person should know before opening a URL a server asks them to open (URL-mode
    elicitation): the host to show prominently, why the URL is refused (None: it may be offered),
    and warnings (a punycode host that may imitate another name, a user name before the host)."""

    url: str
    host: str
    refused: str | None = None
    warnings: tuple[str, ...] = ()


def check_url(url: Any) -> UrlCheck:
    """Only https URLs, or http to this machine (local development), are offered to open."""
    text = url if isinstance(url, str) else ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return UrlCheck(text, "", "it is not a valid URL")
    host, scheme = parts.hostname or "", parts.scheme.lower()
    refused = None
    if scheme not in ("https", "http"):
        refused = f"only https URLs are opened, not {scheme + ':' if scheme else 'one without a scheme'}"
    elif not host:
        refused = "it names no host"
    elif scheme == "http" and not _is_loopback(host):
        refused = "only https URLs are opened (http only to this machine)"
    warnings = []
    shown = _unicode_host(host)
    if shown != host or not host.isascii():
        warnings.append(f"the host is an international (punycode) name, shown as {shown}: it may imitate another name")
    if "@" in parts.netloc:
        warnings.append(f"the URL has a user name before the host: it goes to {host}")
    return UrlCheck(text, host, refused, tuple(warnings))


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _unicode_host(host: str) -> str:
    """The host as a browser may show it: punycode labels (xn--...) decoded."""
    labels = []
    for label in host.split("."):
        try:
            labels.append(label.encode("ascii").decode("idna") if label.startswith("xn--") else label)
        except UnicodeError:
            labels.append(label)
    return ".".join(labels)


class Question:
    """A server request waiting for the user's answer; answered once, from any thread."""

    def __init__(self, kind: str, params: dict[str, Any], connection: str = "") -> None:
        self.kind = kind  # "sampling" or "elicitation"
        self.params = params
        self.connection = connection
        self.future: Future[dict[str, Any] | None] = Future()
        self.completed = threading.Event()  # URL mode: the server said the interaction is done
        self._on_complete: list[Callable[[], Any]] = []

    @property
    def mode(self) -> str:
        return str(self.params.get("mode") or "form")

    @property
    def schema(self) -> dict[str, Any]:
        schema = self.params.get("requestedSchema")
        return schema if isinstance(schema, dict) else {}

    @property
    def url_check(self) -> UrlCheck:
        """URL mode: the URL's host, warnings, and why it is refused, if it is."""
        return check_url(self.params.get("url"))

    @property
    def elicitation_id(self) -> str | None:
        value = self.params.get("elicitationId")
        return value if isinstance(value, str) else None

    @property
    def answered(self) -> bool:
        return self.future.done()

    def when_completed(self, callback: Callable[[], Any]) -> None:
        """Run `callback` once the server reports this URL elicitation complete (now if it has)."""
        self._on_complete.append(callback)
        if self.completed.is_set():
            callback()

    def complete(self) -> None:
        """The server's `notifications/elicitation/complete` for this question arrived."""
        if not self.completed.is_set():
            self.completed.set()
            for callback in self._on_complete:
                callback()

    def _settle(self, value: dict[str, Any] | None) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def accept(self, content: dict[str, Any] | None = None) -> None:
        """Elicitation: accept with `content` (checked against the schema); URL mode: no content."""
        if self.mode == "url":
            refused = self.url_check.refused
            if refused is not None:
                raise UsageError(f"this URL cannot be accepted: {refused}")
            self._settle({"action": "accept"})
            return
        content = with_defaults(self.schema, content or {})
        issues = problems(content, self.schema)
        if issues:
            raise UsageError("; ".join(issues))
        self._settle({"action": "accept", "content": content})

    def decline(self) -> None:
        self._settle({"action": "decline"} if self.kind == "elicitation" else None)

    def cancel(self) -> None:
        self._settle({"action": "cancel"} if self.kind == "elicitation" else None)

    def reply(self, text: str, model: str = "notebook-user") -> None:
        """Sampling: answer with this text as the assistant's message."""
        self._settle(sampling_result(text, model))


def with_defaults(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """`content` with the schema's defaults filled in for the fields it leaves out (SEP-1034)."""
    filled = dict(content)
    for name, prop in (schema.get("properties") or {}).items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = prop["default"]
    return filled


def sampling_result(text: str, model: str = "notebook-user") -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model, "stopReason": "endTurn"}


def roots_of(roots: Any) -> list[dict[str, Any]] | None:
    """Roots as the protocol lists them: None (not declared), True (cwd), or paths / root dicts."""
    if roots is None or roots is False:
        return None
    if roots is True:
        roots = [os.getcwd()]
    if isinstance(roots, (str, os.PathLike)):
        roots = [roots]
    listed = []
    for root in roots:
        if isinstance(root, dict):
            listed.append(dict(root))
            continue
        text = str(root)
        if text.startswith("file://"):
            listed.append({"uri": text, "name": Path(text[7:]).name or text})
        else:
            path = Path(text).expanduser().resolve()
            listed.append({"uri": path.as_uri(), "name": path.name or str(path)})
    return listed


async def _call_user(fn: Callable[..., Any], params: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(params)
    return await anyio.to_thread.run_sync(fn, params, abandon_on_cancel=True)


class ServerRequests:
    """The configured answers to server requests, and the capabilities they imply."""

    def __init__(
        self, *, roots: Any = None, sampling: Any = None, elicitation: Any = None, answer_timeout: float = ANSWER_TIMEOUT
    ) -> None:
        if sampling is not None and sampling is not True and not callable(sampling):
            raise UsageError("sampling= takes a callback fn(params) -> str | dict, or True to ask in the notebook")
        if elicitation is not None and elicitation not in (True, "defaults") and not callable(elicitation):
            raise UsageError("elicitation= takes a callback fn(params) -> dict, True to ask in the notebook, or 'defaults'")
        self.roots = roots_of(roots)
        self.sampling = sampling
        self.elicitation = elicitation
        self.answer_timeout = answer_timeout
        self.completed_elicitations: set[str] = set()
        self.awaited: OrderedDict[str, Question] = OrderedDict()  # URL questions by elicitationId
        # The call whose cell a question goes to; the feature state that owns this plugs in its own.
        self.current_call: Callable[[], Caller | None] = lambda: None
        self.tasks: TaskReceiver | None = None  # tasks we run for the server, once `receive_tasks` is called

    def receive_tasks(self, session: Any, taken: Callable[[str], bool] = lambda method: False) -> None:
        """Run sampling and elicitation as tasks when the server asks (those we answer, and not
        `taken` by a handler of the user's): declare the client `tasks` capability, serve `tasks/*`."""
        answered = self._answers()
        methods: set[str] = {
            method for method in ("sampling/createMessage", "elicitation/create") if method in answered and not taken(method)
        }
        self.tasks = TaskReceiver(session, methods) if methods else None

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.tasks is not None:
            caps["tasks"] = self.tasks.capability()
        return caps

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        table = self._answers()
        return self.tasks.handlers(table) if self.tasks is not None else table

    def _answers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        table: dict[str, Callable[[dict[str, Any]], Any]] = {}
        if self.roots is not None:
            table["roots/list"] = self.list_roots
        if self.sampling is not None:
            table["sampling/createMessage"] = self.create_message
        if self.elicitation is not None:
            table["elicitation/create"] = self.elicit
        return table

    async def list_roots(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": list(self.roots or [])}

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any]:
        if callable(self.sampling):
            value = await _call_user(self.sampling, params)
            if isinstance(value, str):
                return sampling_result(value)
            if isinstance(value, dict):
                return value
            raise McpError(USER_REJECTED, "User rejected sampling request")
        answer = await self._ask(Question("sampling", params))
        if answer is None:
            raise McpError(USER_REJECTED, "User rejected sampling request")
        return answer

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode") or "form"
        if mode not in ("form", "url"):
            raise McpError(rpc.INVALID_PARAMS, f"elicitation mode {mode!r} is not supported by this client")
        requested = params.get("requestedSchema")
        schema: dict[str, Any] = requested if isinstance(requested, dict) else {}
        if callable(self.elicitation):
            value = await _call_user(self.elicitation, params)
            if value is None:
                return {"action": "decline"}
            if isinstance(value, dict) and value.get("action") in ("accept", "decline", "cancel"):
                return value
            if isinstance(value, dict):
                return {"action": "accept", "content": with_defaults(schema, value)} if mode == "form" else {"action": "accept"}
            raise TypeError(f"the elicitation callback returned {type(value).__name__}; return a dict or None")
        if self.elicitation == "defaults":
            return {"action": "accept", "content": with_defaults(schema, {})} if mode == "form" else {"action": "decline"}
        question = Question("elicitation", params)
        if mode == "url":
            self.await_completion(question)
        answer = await self._ask(question)
        return answer if answer is not None else {"action": "cancel"}

    def await_completion(self, question: Question) -> None:
        """Listen for the server's completion notice of this URL question."""
        if question.elicitation_id is None:
            return
        if question.elicitation_id in self.completed_elicitations:
            question.complete()
            return
        self.awaited[question.elicitation_id] = question
        while len(self.awaited) > MAX_AWAITED:
            self.awaited.popitem(last=False)

    def on_elicitation_complete(self, params: dict[str, Any]) -> None:
        """`notifications/elicitation/complete`: unknown or repeated ids are ignored (the spec's MUST)."""
        elicitation_id = params.get("elicitationId")
        if not isinstance(elicitation_id, str) or elicitation_id in self.completed_elicitations:
            return
        self.completed_elicitations.add(elicitation_id)
        question = self.awaited.pop(elicitation_id, None)
        if question is not None:
            question.complete()

    async def _ask(self, question: Question) -> dict[str, Any] | None:
        """Post the question to the waiting cell; its answer, or None (no cell, or no answer in time)."""
        call = self.current_call()
        if call is None:
            return None
        call.post("question", question)
        try:
            with anyio.move_on_after(self.answer_timeout):
                while not question.answered:
                    await anyio.sleep(0.05)
        finally:
            question.cancel()  # no-op once answered; else the timeout's (or the abandoned request's) answer
        return question.future.result()
