"""The health monitor: client keepalive, the ready/degraded/stale state machine, health history.

One monitor per connection, running as two tasks in the session's task group (so they
end with the session): a keepalive that pings the server (a liveness probe on modern
connections, which have no ping), and a sampler that keeps recent health snapshots.
Everything here runs on the session thread except `configure`, `wait_state` and the
read-only properties, which any thread may call.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import weakref
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import anyio

from ...base.errors import ConnectionClosed, McpError, McpNotebookError, RequestTimeout
from ...runtime import get_runtime
from ...session.health import DEGRADED, LIVE_STATES, READY, RECONNECTING, STALE, Health, snapshot
from ...session.live_state import all_clear
from ..connecting.settings import defaults, on_change

_monitors: weakref.WeakSet[Monitor] = weakref.WeakSet()


@dataclass(frozen=True, slots=True)
class KeepaliveSettings:
    """The keepalive settings in force for one connection."""

    enabled: bool
    interval: float
    timeout: float
    misses: int


class Monitor:
    """Keepalive pings, state transitions and a bounded health history for one session."""

    def __init__(self, name: str, session: Any) -> None:
        self.name = name
        self.session = session
        self._overrides: dict[str, Any] = {}
        self._wake: anyio.Event | None = None
        self._changed = threading.Condition()
        self.history: deque[Health] = deque(maxlen=max(1, defaults.health_history))
        self.restarts = 0  # servers restarted under this connection
        self._restarting: str | None = None  # why, while a restart is under way
        session.state_listeners.append(self._state_changed)
        _monitors.add(self)

    # ----- settings (any thread) -----

    @property
    def settings(self) -> KeepaliveSettings:
        """This connection's keepalive settings: its own where set, else the defaults."""
        o = self._overrides
        return KeepaliveSettings(
            enabled=o.get("enabled", defaults.keepalive),
            interval=o.get("interval", defaults.keepalive_interval),
            timeout=o.get("timeout", defaults.keepalive_timeout),
            misses=o.get("misses", defaults.keepalive_misses),
        )

    def configure(
        self,
        *,
        enabled: bool | None = None,
        interval: float | None = None,
        timeout: float | None = None,
        misses: int | None = None,
        reset: bool = False,
    ) -> KeepaliveSettings:
        """Set this connection's keepalive (None keeps the current value; reset=True follows the defaults)."""
        for label, value in (("interval", interval), ("timeout", timeout)):
            if value is not None and value <= 0:
                raise ValueError(f"the keepalive {label} must be more than 0 seconds")
        if misses is not None and misses < 1:
            raise ValueError("the keepalive needs at least 1 miss to go stale")
        if reset:
            self._overrides = {}
        given = {"enabled": enabled, "interval": interval, "timeout": timeout, "misses": misses}
        self._overrides = {**self._overrides, **{k: v for k, v in given.items() if v is not None}}
        self.wake()
        return self.settings

    def wake(self) -> None:
        """Make the keepalive re-read its settings now (from any thread)."""
        runtime = get_runtime()
        if runtime.running:
            runtime.call_soon(self._wake_now)

    def _wake_now(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def health(self) -> Health:
        """A snapshot now; "reconnecting" while a restart is under way (the old session closing, the new one opening)."""
        ka = self.settings
        health = snapshot(self.name, self.session, keepalive=ka.enabled, keepalive_interval=ka.interval, restarts=self.restarts)
        why = self._restarting
        return health if why is None else dataclasses.replace(health, state=RECONNECTING, state_reason=why)

    # ----- restarts (`api.connecting.restart`) -----

    def restarting(self, why: str) -> None:
        """A restart begins: the health reads "reconnecting" until `adopt`."""
        self._restarting = why
        self._state_changed(RECONNECTING, why)

    def adopt(self, session: Any) -> None:
        """Follow the restarted server's session: the history and settings carry on, the restart is counted,
        and the keepalive and sampler start again in the new session (the old ones ended with the old)."""
        self.session = session
        self.restarts += 1
        self._restarting = None
        session.state_listeners.append(self._state_changed)
        self.start()

    def wait_state(self, states: str | Collection[str], timeout: float | None = None) -> bool:
        """Block until the connection is in one of `states` (or closed); False on timeout."""
        wanted = (states,) if isinstance(states, str) else tuple(states)
        with self._changed:
            return self._changed.wait_for(lambda: self.session.counters.state in wanted or self.session.closed, timeout)

    # ----- running (session thread) -----

    def start(self) -> None:
        """Start the keepalive and the sampler in the session's task group (from outside the loop);
        the history starts with the connection as it was returned, whenever the sampler runs."""
        self.history.append(self.health())
        get_runtime().spawn(self._start)

    async def _start(self) -> None:
        """Runs as a task: anyio can start tasks only from inside one, not from a plain callback."""
        try:
            self.session.spawn(self._keepalive)
            self.session.spawn(self._sample)
        except ConnectionClosed:
            pass

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _move(self, state: str, reason: str) -> None:
        """Change between the live states; never out of closing, closed or reconnecting."""
        if self.session.counters.state in LIVE_STATES:
            self.session.set_state(state, reason)

    def _state_changed(self, state: str, reason: str) -> None:
        """Any transition, whoever made it (the session, a transport failure, this monitor):
        a snapshot in the history, and waiters woken."""
        self.history.append(self.health())
        self._notify()

    async def _keepalive(self) -> None:
        try:
            while not self.session.closed:
                ka = self.settings
                self._wake = wake = anyio.Event()
                # Modern servers are stateless and may sit behind load balancers: spread the
                # probes (jitter) so many clients do not arrive in step.
                interval = ka.interval * random.uniform(0.9, 1.1) if self.session.rules.keepalive_jitter else ka.interval
                with anyio.move_on_after(interval if ka.enabled else None):
                    await wake.wait()
                if wake.is_set() or self.session.closed:
                    continue  # settings changed: start a fresh wait with the new ones
                if len(self.session.requests):
                    self.session.counters.keepalive_skips += 1  # the request in flight will tell
                    continue
                await self._probe(ka)
        finally:
            self._wake = None
            self._notify()

    async def _probe(self, ka: KeepaliveSettings) -> None:
        counters = self.session.counters
        counters.keepalive_pings += 1
        try:
            await self.session.ping(timeout=ka.timeout)  # on modern connections, the liveness probe
        except RequestTimeout:
            counters.keepalive_misses += 1
            missed = counters.keepalive_misses
            if missed >= ka.misses:
                self._move(STALE, f"{missed} keepalive pings unanswered (timeout {ka.timeout:g} s)")
            else:
                self._move(DEGRADED, f"keepalive ping unanswered within {ka.timeout:g} s ({missed} of {ka.misses})")
            return
        except McpError:
            pass  # Any answer, even a JSON-RPC error from a server without ping, shows it is alive.
        except (ConnectionClosed, McpNotebookError):
            return
        missed, counters.keepalive_misses = counters.keepalive_misses, 0
        if missed and all_clear(counters):
            self._move(READY, f"keepalive ping answered after {missed} missed")
        elif missed and counters.listening_down is not None:
            self._move(DEGRADED, f"keepalive ping answered, but the listening stream is {counters.listening_down}")

    async def _sample(self) -> None:
        try:
            while not self.session.closed:
                await anyio.sleep(max(0.05, defaults.health_history_interval))
                self.history.append(self.health())
        finally:
            self.history.append(self.health())
            self._notify()


def _wake_all() -> None:
    for monitor in list(_monitors):
        monitor.wake()


on_change(_wake_all)
