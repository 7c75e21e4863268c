"""Renewing an HTTP session the server forgot: a new handshake, and what it lost sent again.

A 404 for our session (on a POST, or on the GET listening stream) starts one renewal: the
transport forgets the session, the `initialize` handshake runs again, and the requests the
server lost are resent once (a request that meets the 404 again fails). The rule it keeps: a
server that forgets every new session at once cannot drive renewals without end. The first
renewal goes at once (a server restarted); one that follows another with nothing received in
between (`in_row`; the handshake's own answer does not count, any other frame resets it) waits
`backoff` first (the listening stream's floor, doubling and cap), and after MAX_IN_ROW
renewals in a row the connection ends, saying why. Runs on the session thread.
"""

from __future__ import annotations

import anyio

from ..base.errors import ConnectionClosed
from ..base.plural import counted
from ..protocol import jsonrpc as rpc
from ..transports.backoff import backoff
from . import live_state
from .health import LIVE_STATES, RECONNECTING
from .port import SessionPort
from .requests import Request

MAX_IN_ROW = 8  # renewals in a row with nothing received between them, before the connection gives up


class Renewal:
    """The renewals of one session's HTTP session."""

    pause = staticmethod(anyio.sleep)  # the waits between renewals in a row

    def __init__(self, session: SessionPort) -> None:
        self.session = session
        self.recovering = False  # a new HTTP session is being shaken hands with
        self.lost: list[Request] = []  # requests the server forgot, resent once it knows us again
        self.in_row = 0  # renewals since the server last sent anything but a handshake's answer

    def heard(self) -> None:
        """A frame came in: the server speaks in its session (unless it is the renewal's handshake)."""
        if not self.recovering:
            self.in_row = 0

    def expired(self, request_id: rpc.RequestId | None, current: bool = True) -> None:
        """The server forgot our session: shake hands anew and resend what it lost, once. An
        `initialize` that carried a dead session id goes again at once, without it; while the
        connection opens no renewal comes, so no other request waits for one."""
        session = self.session
        pending = session.requests.get(request_id)
        if pending is not None and pending.method == "initialize" and not pending.resent:
            pending.resent = True
            session.transport.reset_session()
            session.send_request(pending, note="resent without the session id the server no longer knows")
            return
        opening = not self.recovering and session.counters.state not in LIVE_STATES
        if pending is not None:
            if pending.resent or opening:
                session.requests.pop(pending.id)
                why = "again after it was renewed" if pending.resent else "while the connection was opening"
                failure = ConnectionClosed(f"{pending.method}: the server forgot the session {why}")
                session.requests.settle(pending, failure=failure)
            else:
                self.lost.append(pending)
        if self.recovering:
            return
        if not current:  # a 404 for a session we have already replaced: just resend
            self._resend_lost()
        elif session.running and session.counters.state in LIVE_STATES:
            self.recovering = True
            session.spawn(self._recover)

    async def _recover(self) -> None:
        session = self.session
        if self.in_row >= MAX_IN_ROW:
            self.recovering = False
            session.end(
                ConnectionClosed(
                    f"the server forgot {counted(self.in_row, 'new session')} in a row before it sent anything in them "
                    "(HTTP 404); gave up renewing"
                )
            )
            return
        wait = backoff(None, self.in_row - 1) if self.in_row else 0.0
        self.in_row += 1
        reason = "HTTP 404: the server no longer knows our session"
        if wait:
            reason += f"; renewing in {wait:g} s ({counted(self.in_row - 1, 'renewal')} in a row brought nothing)"
        session.set_state(RECONNECTING, reason)
        session.counters.session_recoveries += 1
        session.transport.reset_session()
        try:
            if wait:
                await self.pause(wait)
            await session.handshake()
        except Exception as exc:  # noqa: BLE001 - the connection ends with the reason
            self.recovering = False
            session.end(ConnectionClosed(f"the session expired and a new one could not be started: {exc}"))
            return
        self.recovering = False
        resent = self._resend_lost()
        live_state.ready(session, f"new session; {counted(resent, 'request')} resent")

    def _resend_lost(self) -> int:
        lost, self.lost = self.lost, []
        count = 0
        for pending in lost:
            if pending.settled:
                continue
            pending.resent = True
            count += 1
            try:
                self.session.outbox.send(
                    rpc.request(pending.id, pending.method, pending.params), rpc.REQUEST, note="resent in a new session"
                )
            except ConnectionClosed as exc:
                self.session.requests.pop(pending.id)
                self.session.requests.settle(pending, failure=self.session.closed_error(str(exc)))
        return count
