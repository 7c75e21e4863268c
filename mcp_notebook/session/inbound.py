"""The session's side of the transport contract: frames and wire events coming in, and the
pong (our answer to a server's ping) written here, by `Inbound.pong`.

Everything here runs on the session thread, called by the transport, except `frame_here`,
which a transport with a reading thread of its own (stdio) calls on that thread first: an
answer a blocked caller waits for, and a server ping, are taken there at once, with no
event loop in between (the pong goes out from that thread). Any other frame is classified
and dispatched on the session thread the moment it reaches it (a server ping is answered
before the callback returns; a ping handler of the user's, if one is set, answers instead,
as `user_handlers` runs it; the outbox counts pongs and their latency), a
malformed answer fails the request it names at once, the user's handlers run as bounded
tasks (`user_handlers`), a hang-up fails what is pending, an
expired HTTP session is renewed (`renewal`), and transport failures move the health state (degraded,
then stale) until a frame comes in again. The session owns one `Inbound` and hands it to
its transport as the `Sink`.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import anyio

from ..base.errors import ConnectionClosed, ProtocolViolation, ReissuableError, TransportError
from ..base.sizes import GIVE_BACK_AFTER, given_back_when_dropped
from ..protocol import jsonrpc as rpc
from ..protocol.frame_rules import Seen, Violation, url
from ..protocol.versions import accepts_batches
from . import live_state
from .port import SessionPort
from .renewal import Renewal
from .requests import Request
from .subscriptions import route
from .trace import IN
from .user_handlers import UserHandlers
from .violations import frame_version

NO_REQUEST = "response to no request of ours, ignored"


def _held(response: dict[str, Any], text: str) -> dict[str, Any]:
    """A response as its caller gets it: the result of a big one gives its memory back when dropped."""
    result = response.get("result")
    if len(text) >= GIVE_BACK_AFTER and isinstance(result, dict):
        response["result"] = given_back_when_dropped(result)
    return response


class Inbound:
    """Dispatch of what the transport pushes in, for one session."""

    def __init__(self, session: SessionPort) -> None:
        self.session = session
        self.renewal = Renewal(session)  # of the HTTP session, when the server forgets it
        self.handlers = UserHandlers(session)
        self._read_at = 0.0
        # What `frame_here` decoded and left to the loop, with its text: `frame_received` comes
        # next with that same text (frame_here is called only while no frame waits for the loop).
        self._decoded_here: tuple[str, rpc.Frame] | None = None

    def frame_received(self, text: str, via: str | None = None, problem: str | None = None) -> None:
        """The transport read a frame: dispatch it now, on the session thread (`problem`: what
        was wrong with its bytes, which makes it invalid whatever its text says)."""
        self._read_at = time.perf_counter()
        if self.renewal.in_row:
            self.renewal.heard()
        if self.session.counters.transport_failures:
            self._reached_again()
        decoded, self._decoded_here = self._decoded_here, None
        try:
            frame = decoded[1] if decoded is not None and decoded[0] is text and problem is None else rpc.decode(text, problem)
            del decoded
            self._dispatch(text, frame, via=via)
        except Exception as exc:  # noqa: BLE001 - one bad frame never ends the session
            self.session.trace.event("dispatch-error", note=f"{type(exc).__name__}: {exc}")

    def frame_here(self, text: str) -> bool:
        """On the transport's reading thread: settle an answer that a blocked caller (not the loop)
        waits for, or answer a server ping we answer ourselves; False leaves the frame to
        `frame_received` on the session thread. The transport calls this only while every
        earlier frame has been dispatched, so the order of frames holds; a frame left to the loop
        is not decoded again there."""
        session = self.session
        if session.counters.transport_failures or self.renewal.recovering or session.checker.strict:
            return False
        try:
            frame = rpc.decode(text)
            kind, message = frame.kind, frame.message
            if kind == rpc.RESPONSE and self._answer_here(text, message):
                return True
            if kind == rpc.REQUEST and message["method"] == "ping" and session.rules.pings and self._pong_here(text, message):
                return True
        except Exception as exc:  # noqa: BLE001 - one bad frame never ends the session
            session.trace.event("dispatch-error", note=f"{type(exc).__name__}: {exc}")
            return True
        self._decoded_here = (text, frame)
        return False

    def _answer_here(self, text: str, message: dict[str, Any]) -> bool:
        requests, request_id = self.session.requests, message["id"]
        pending = requests.take_waited(request_id)
        if pending is None:
            return False  # the loop's to wait on, or not ours (anymore): the loop tells which
        entry = self.session.trace.frame(IN, rpc.RESPONSE, text, message, method=pending.method, id=request_id)
        self.session.counters.last_frame_in = entry.monotonic
        self._check(entry.seq, rpc.RESPONSE, message, pending, size=len(text))
        pending.received_at = time.perf_counter()
        requests.settle(pending, response=_held(message, text))
        return True

    def _pong_here(self, text: str, request: dict[str, Any]) -> bool:
        if self.session.request_handlers.get("ping") is not None:
            return False  # the user's handler runs on the loop
        read_at = time.perf_counter()
        entry = self.session.trace.frame(IN, rpc.REQUEST, text, request, method="ping", id=request["id"])
        self.session.counters.last_frame_in = entry.monotonic
        self.session.counters.server_pings += 1
        self.pong(request, read_at)
        self._check(entry.seq, rpc.REQUEST, request, method="ping", size=len(text))
        return True

    def pong(self, ping: dict[str, Any], read_at: float) -> None:
        """Answer a server's `ping` (an empty result), on the thread that read it; `read_at`
        (perf_counter) is when it was read, for the pong latency the outbox records."""
        self.session.outbox.send_reply(rpc.result(ping["id"], {}), ping, note="pong", read_at=read_at)

    def _dispatch(
        self, text: str, frame: rpc.Frame, *, record: bool = True, via: str | None = None, size: int | None = None
    ) -> None:
        kind, message, note = frame
        pending, note = self._answered(frame, text)
        if kind == rpc.BATCH and not accepts_batches(self.session.protocol_version):
            kind, note = rpc.INVALID, f"batches are not allowed in protocol {self.session.protocol_version}"
        if record:
            method = pending.method if pending is not None else frame.method
            entry = self.session.trace.frame(IN, kind, text, message, method=method, id=frame.id, note=note, via=via)
            self.session.counters.last_frame_in = entry.monotonic
            matched = pending is not None or kind not in (rpc.RESPONSE, rpc.ERROR) or note != NO_REQUEST
            problem = note if kind == rpc.INVALID else None
            broken = self._check(
                entry.seq, kind, message, pending, matched=matched, problem=problem, method=method, size=len(text)
            )
            if broken:
                self._strict_stop(broken[0], pending)
                return
        redactor = self.session.trace.redactor
        if kind == rpc.ERROR and redactor and redactor.found_in(text):
            message = redactor.value(message)  # its words end up in an exception shown to people
        if pending is not None and kind == rpc.INVALID:
            self._on_invalid(message)
            problem = f"{pending.method}: the server answered with a malformed response ({frame.problem})"
            self.session.requests.settle(pending, failure=ProtocolViolation(problem))
        elif pending is not None:
            pending.received_at = time.perf_counter()
            self.session.requests.settle(pending, response=_held(message, text))
        elif kind == rpc.REQUEST:
            self._on_request(message, len(text) if size is None else size)
        elif kind == rpc.NOTIFICATION:
            self._on_notification(message, len(text) if size is None else size)
        elif kind == rpc.BATCH:
            for item in message:  # each item is held by its handler as an equal share of the text
                self._dispatch(text, rpc.classify(item), record=False, size=len(text) // max(len(message), 1))
        elif kind == rpc.INVALID:
            self._on_invalid(message)

    def _check(
        self,
        seq: int,
        kind: str,
        message: Any,
        pending: Request | None = None,
        *,
        matched: bool = True,
        problem: str | None = None,
        method: str | None = None,
        size: int = 0,
    ) -> list[Violation]:
        """Hand the frame to the checker, with what we know as it arrives (`size`: its text's length)."""
        session = self.session
        answered = pending.method if pending is not None else None
        version = frame_version(session.protocol_version, answered, message, session.client.requested_version)
        if version is None and kind == rpc.INVALID:  # a banner before the handshake: the spec we asked for
            version = session.client.requested_version
        params = pending.params if pending is not None else None
        return session.checker.submit(
            Seen(seq, kind, message, version, answered or method, params, matched, problem,
                 session.server.capabilities, session.client.capabilities, session.transport.kind == "stdio"),
            size,
        )  # fmt: skip

    def _strict_stop(self, violation: Violation, pending: Request | None) -> None:
        """Strict mode: the call the frame answers fails naming the rule, and the connection ends."""
        problem = f"strict mode: the server broke the rule {violation.rule!r}: {violation}"
        if pending is not None:
            self.session.requests.settle(pending, failure=ProtocolViolation(problem))
        self.session.end(ConnectionClosed(problem))

    def _answered(self, frame: rpc.Frame, text: str) -> tuple[Request | None, str | None]:
        """The request of ours `frame` answers, if any, and what the trace should say of it: an
        invalid frame answers the request its id names, read from the text if it did not parse."""
        kind = frame.kind
        if kind == rpc.RESPONSE or kind == rpc.ERROR:
            return self._match(frame.message["id"], frame.problem)
        if kind == rpc.INVALID:
            answers = frame.answers if frame.message is not None else rpc.id_in_text(text)
            if answers is not None:
                return self._match(answers, frame.problem)
        return None, frame.problem

    def _match(self, request_id: Any, note: str | None) -> tuple[Request | None, str | None]:
        """The request of ours a response answers, and what the trace should say of it."""
        pending = None
        if type(request_id) is int:  # our ids: never a bool, nor a string
            requests = self.session.requests
            pending = requests.pop(request_id)
            cancelled = requests.cancelled_reason(request_id) if pending is None else None
            if cancelled is not None:
                note = f"late response, ignored ({cancelled})"
        if pending is None and note is None:
            note = NO_REQUEST
        return pending, note

    def _on_invalid(self, message: Any) -> None:
        self.session.counters.invalid_frames += 1
        if self.session.transport.kind != "stdio" and isinstance(message, dict) and isinstance(message.get("method"), str):
            # Over HTTP the server's POST or stream waits on an answer: a request whose id we
            # cannot echo gets Method not found without an id (stdio: no answer at all).
            reply = {
                "jsonrpc": rpc.JSONRPC,
                "error": {
                    "code": rpc.METHOD_NOT_FOUND,
                    "message": "Method not found: the request id is not a string or an integer",
                },
            }
            try:
                self.session.outbox.send(reply, rpc.ERROR, note="reply to an invalid request")
            except ConnectionClosed:
                pass

    def _on_request(self, request: dict[str, Any], size: int) -> None:
        method = request["method"]
        if not self.session.rules.server_requests:
            # 2026-07-28 has no server-to-client requests (input comes through input_required
            # results), so nothing here is answered, a ping included.
            self.session.trace.event(
                "unanswered", note="server requests do not exist in 2026-07-28", method=method, id=request["id"]
            )
            return
        if method == "ping":
            self.session.counters.server_pings += 1
        handler = self.session.request_handlers.get(method)
        if handler is not None and self.session.running and self.handlers.serve(handler, request, self._read_at, size):
            return
        if method == "ping":  # no handler of the user's, or theirs are all busy: pings are never refused
            self.pong(request, self._read_at)
        else:
            self.session.outbox.send_reply(rpc.error(request["id"], rpc.METHOD_NOT_FOUND, f"Method not found: {method}"), request)

    def _on_notification(self, message: dict[str, Any], size: int) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if self.session.subscriptions:
            route(self.session.subscriptions, method, params)
        if method == "notifications/cancelled" and isinstance(params, dict):
            self.handlers.cancel(params.get("requestId"))
        inline = self.session.notification_handlers.inline(method)
        if inline is not None:
            try:
                inline(params)
            except Exception as exc:  # noqa: BLE001 - bookkeeping never ends the session
                self.session.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}", method=method)
        handler = self.session.notification_handlers.get(method)
        if handler is not None and self.session.running:
            self.handlers.notify(handler, method, params, size)

    def hung_up(self) -> None:
        """The transport lost its peer: fail what is pending, once we know why."""
        if self.session.running:  # else we are closing: run() has ended the session
            self.session.spawn(self._after_hangup)

    def violated(self, rule: str, message: str, section: str) -> None:
        """The transport found the server breaking one of its rules: kept with the frames' violations
        (in strict mode, the connection ends)."""
        session = self.session
        entry = session.trace.event("violation", note=message, rule=rule)
        violation = Violation(entry.seq, IN, None, "", rule, message, url(session.protocol_version, section))
        if session.checker.report(violation) and session.checker.strict:
            self._strict_stop(violation, None)

    def awaiting(self, request_id: rpc.RequestId) -> bool:
        return request_id in self.session.requests

    def send_failed(self, request_id: rpc.RequestId | None, error: Exception) -> None:
        """A frame never reached the server: a request fails with the transport's explanation.

        A modern response stream that broke before its response is re-issued once, with a new id.
        """
        pending = self.session.requests.pop(request_id)
        if isinstance(error, ReissuableError):
            if pending is not None and not pending.resent:
                pending.resent = True
                self.session.requests.reissue(pending)
                self.session.send_request(pending, note=f"re-issued: the stream of request {request_id} broke")
                return
            error = TransportError(str(error), status=error.status)  # to the caller, a transport failure
        error = self.session.trace.redactor.exception(error)
        self._transport_failed(error)
        if pending is not None:
            self.session.requests.settle(pending, failure=error)

    def _transport_failed(self, error: Exception) -> None:
        live_state.transport_failed(self.session, error)

    def _reached_again(self) -> None:
        live_state.reached_again(self.session)

    def listening_changed(self, down: str | None) -> None:
        """The GET listening stream is down, or back: what the server sends between our requests
        cannot reach us meanwhile, so a ready connection is degraded (`live_state`)."""
        live_state.listening_changed(self.session, down)

    async def caught_up(self) -> None:
        """A reader on the loop, between frames: wait while the checker's backlog is full."""
        checker = self.session.checker
        while checker.behind():
            room = anyio.Event()
            checker.when_room(functools.partial(self.session.soon, room.set))
            await room.wait()

    def wait_caught_up(self) -> None:
        """A reader on a thread of its own, between frames: the same, blocking that thread."""
        if self.session.checker.behind():
            self.session.checker.wait_room()

    def session_expired(self, request_id: rpc.RequestId | None, current: bool = True) -> None:
        """The server forgot our session: shake hands anew and resend what it lost, once (`renewal`)."""
        self.renewal.expired(request_id, current)

    async def _after_hangup(self) -> None:
        code = await self.session.transport.wait_exit(timeout=2.0)
        if code is not None:
            reason = f"the server exited with code {code}"
        else:
            reason = getattr(self.session.transport, "hangup_reason", None) or "the server closed its output"
        self.session.end(ConnectionClosed(reason, exit_code=code, stderr_tail=tuple(self.session.transport.stderr_tail)))
