"""The stdio transport: a child process speaking newline-delimited JSON-RPC.

It moves frames and reports transport events (spawn, stderr lines, exit); it knows
nothing of MCP. The child's stderr goes to a bounded buffer, never to our stderr.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from ._errors import TransportClosed

EventSink = Callable[..., Any]

MAX_FRAME_BYTES = 64 * 1024 * 1024
STDERR_LINES = 200
EXIT_GRACE = 2.0
TERM_GRACE = 2.0


def _no_events(name: str, note: str | None = None, **detail: Any) -> None:
    return None


class StdioTransport:
    """Spawn a server and exchange newline-delimited UTF-8 frames with it."""

    kind = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        events: EventSink = _no_events,
        exit_grace: float = EXIT_GRACE,
    ) -> None:
        if not command:
            raise ValueError("the server command is empty")
        self.command = list(command)
        self._env = {**os.environ, **(env or {})}
        self._cwd = cwd
        self._events = events
        self._exit_grace = exit_grace
        self._process: Process | None = None
        self._buffer = bytearray()
        self._lines: deque[str] = deque()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_done = anyio.Event()
        self.exit_code: int | None = None
        self._closing = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def describe(self) -> str:
        return " ".join(self.command)

    async def open(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the child in its own process session, so a kernel interrupt spares it."""
        executable = shutil.which(self.command[0], path=self._env.get("PATH"))
        if executable is None:
            raise FileNotFoundError(f"executable {self.command[0]!r} not found on PATH")
        self._process = await anyio.open_process(
            [executable, *self.command[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            cwd=self._cwd,
            start_new_session=True,
        )
        self._events("spawn", pid=self._process.pid, command=self.command)
        task_group.start_soon(self._read_stderr)

    async def send(self, text: str) -> None:
        """Write one frame; raises TransportClosed if the server's stdin is gone."""
        process = self._process
        if process is None or process.stdin is None or self._closing:
            raise TransportClosed("the server's stdin is closed")
        try:
            await process.stdin.send(text.encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise TransportClosed(f"cannot write to the server: {exc or type(exc).__name__}") from exc

    async def receive(self) -> str:
        """Return the next frame's text; raises anyio.EndOfStream when stdout closes."""
        if self._lines:
            return self._lines.popleft()
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        while True:
            try:
                chunk = await stdout.receive()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                raise anyio.EndOfStream from exc
            buffer = self._buffer
            buffer += chunk
            if b"\n" not in chunk:
                if len(buffer) > MAX_FRAME_BYTES:
                    self._events("oversized-frame", size=len(buffer))
                    buffer.clear()
                continue
            *complete, rest = buffer.split(b"\n")
            self._buffer = bytearray(rest)
            for line in complete:
                text = line.decode("utf-8", errors="replace").strip()
                if text:
                    self._lines.append(text)
            if self._lines:
                return self._lines.popleft()

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        try:
            await _pump_lines(self._process.stderr, self._on_stderr_line)
        finally:
            self._stderr_done.set()

    def _on_stderr_line(self, line: str) -> None:
        self.stderr_tail.append(line)
        self._events("stderr", line=line)

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait for the child to exit after it hung up; its exit code, or None if it lingers."""
        if self._process is None:
            return None
        with anyio.move_on_after(timeout):
            self.exit_code = await self._process.wait()
            with anyio.move_on_after(0.5):
                await self._stderr_done.wait()
        return self.exit_code

    async def aclose(self) -> None:
        """Shut down as the spec says: close stdin, wait, SIGTERM, wait, SIGKILL."""
        process = self._process
        if process is None or self._closing:
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                with anyio.move_on_after(0.5):
                    await process.stdin.aclose()
            for sig, grace in ((None, self._exit_grace), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, 5.0)):
                if sig is not None:
                    self._signal_group(sig)
                with anyio.move_on_after(grace):
                    self.exit_code = await process.wait()
                    break
            with anyio.move_on_after(0.5):
                await self._stderr_done.wait()
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    await stream.aclose()
        self._events("exit", code=self.exit_code)

    def _signal_group(self, sig: signal.Signals) -> None:
        """Signal the child's whole process group, so wrappers like npx take their children along."""
        assert self._process is not None
        self._events("signal", signal=sig.name)
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self._process.send_signal(sig)
            except ProcessLookupError:
                pass


async def _pump_lines(stream: ByteReceiveStream, sink: Callable[[str], None]) -> None:
    """Feed each line of a byte stream to `sink` until the stream ends."""
    pending = b""
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            sink(line.decode("utf-8", errors="replace").rstrip("\r"))
        pending = pending[-MAX_FRAME_BYTES:]
    if pending:
        sink(pending.decode("utf-8", errors="replace"))
