"""The stdio transport: a child process speaking newline-delimited JSON-RPC.

It moves frames and reports transport events (spawn, stderr lines, exit); it knows
nothing of MCP. Frames are read by a thread of the transport's own (`PipeReader`), which
settles an answer a blocked caller waits for and answers a server ping itself, and hands
every other frame to the event loop in order: an answer wakes its caller with no loop in
between, which is what keeps a round trip close to a raw blocking loop. Any thread may
write (`sends_from_any_thread`): a caller's request goes out from the caller's thread,
under the write lock, in one atomic pipe write; whatever cannot go out at once waits in a
buffer the loop flushes, so a frame is never torn. The child's stderr goes to a bounded
tail (`stderr_lines`), never to our stderr (that would land in a random cell). Each child
leads a process group of its own, which the reaper stops should this process die unclosed.
"""

from __future__ import annotations

import asyncio
import os
import select
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

from ..base.errors import ConnectionClosed
from ..protocol.jsonrpc import RequestId
from .base import MAX_FRAME_BYTES, Sink
from .pipe_reader import PipeReader
from .reaper import EXIT_GRACE, KILL_WAIT, TERM_GRACE, Reaper
from .stderr_lines import StderrLines

EventSink = Callable[..., Any]

READ_SIZE = 256 * 1024  # stderr; stdout: pipe_reader's
MAX_UNWRITTEN_BYTES = 64 * 1024 * 1024

# Kills the servers' process groups if this process dies without closing them.
_REAPER = Reaper(EXIT_GRACE, TERM_GRACE, KILL_WAIT)


def _no_events(name: str, note: str | None = None, **detail: Any) -> None:
    return None


def _writes(texts: Sequence[str], limit: int | None) -> Iterator[bytes]:
    """The frames' bytes, newline-terminated, joined into writes of at most `limit` bytes of
    whole frames (None: all in one); a frame longer than `limit` is a write of its own."""
    if limit is None or len(texts) == 1:
        yield ("\n".join(texts) + "\n").encode()
        return
    chunk: list[bytes] = []
    size = 0
    for text in texts:
        data = text.encode() + b"\n"
        if chunk and size + len(data) > limit:
            yield b"".join(chunk)
            chunk, size = [], 0
        chunk.append(data)
        size += len(data)
    if chunk:
        yield b"".join(chunk)


class StdioTransport:
    """Spawn a server and exchange newline-delimited UTF-8 frames with it."""

    kind = "stdio"
    sends_from_any_thread = True

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        events: EventSink = _no_events,
        exit_grace: float = EXIT_GRACE,
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> None:
        if not command:
            raise ValueError("the server command is empty")
        self.command = list(command)
        self._env = {**os.environ, **(env or {})}
        self._cwd = cwd
        self._events = events
        self._exit_grace = exit_grace
        self._process: subprocess.Popen[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sink: Sink | None = None
        self.max_frame_bytes = max_frame_bytes
        self._reader: PipeReader | None = None
        self._stderr = StderrLines(events)
        self._unwritten = bytearray()
        self._write_lock = threading.Lock()  # the stdin pipe and what waits to be written
        self._writer_on = False  # the loop watches stdin to flush `_unwritten`
        self._loop_thread: int | None = None
        self._write_error: str | None = None
        self._exited = anyio.Event()
        self._closing = False
        self._hung_up = False
        self.stderr_tail = self._stderr.tail  # the server's last words
        self.exit_code: int | None = None
        self._unwatched: str | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def describe(self) -> str:
        return " ".join(self.command)

    # ----- start -----

    async def open(self, task_group: anyio.abc.TaskGroup, sink: Sink) -> None:
        """Start the child in its own process session, so a kernel interrupt spares it."""
        executable = shutil.which(self.command[0], path=self._env.get("PATH"))
        if executable is None:
            raise FileNotFoundError(f"executable {self.command[0]!r} not found on PATH")
        self._sink = sink
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._process = process = await anyio.to_thread.run_sync(self._spawn, executable)
        self._events("spawn", pid=process.pid, command=self.command)
        if self._unwatched is not None:
            self._events("unwatched", note=self._unwatched)
        assert process.stdin and process.stdout and process.stderr
        for stream in (process.stdin, process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        self._reader = PipeReader(
            process.stdout.fileno(),
            self._loop,
            sink,
            max_frame_bytes=self.max_frame_bytes,
            on_end=self._hang_up,
            events=self._events,
            name=f"mcp-notebook stdio reader (pid {process.pid})",
        )
        self._reader.start()
        self._loop.add_reader(process.stderr.fileno(), self._read_stderr)
        self._watch_exit(task_group)

    def _spawn(self, executable: str) -> subprocess.Popen[bytes]:
        """Start the server, and have the reaper kill its group should we die without closing it."""
        process = subprocess.Popen(
            [executable, *self.command[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            cwd=self._cwd,
            bufsize=0,
            start_new_session=True,
        )
        try:
            _REAPER.watch(process.pid)  # its group: start_new_session made it the leader
        except (OSError, subprocess.SubprocessError) as exc:
            self._unwatched = f"no watchdog, so the server may outlive this process if it is killed: {exc}"
        return process

    def _watch_exit(self, task_group: anyio.abc.TaskGroup) -> None:
        """Learn of the child's exit from a pidfd where Linux has one, else from a thread."""
        assert self._process is not None and self._loop is not None
        try:
            pidfd = os.pidfd_open(self._process.pid)
        except (AttributeError, OSError):
            task_group.start_soon(self._wait_in_thread)
            return

        def on_exit() -> None:
            self._loop.remove_reader(pidfd)  # type: ignore[union-attr]
            os.close(pidfd)
            self._reap()

        self._loop.add_reader(pidfd, on_exit)

    async def _wait_in_thread(self) -> None:
        assert self._process is not None
        await anyio.to_thread.run_sync(self._process.wait, abandon_on_cancel=True)
        self._reap()

    def _reap(self) -> None:
        """The child exited: read what it left on stderr; the reader reads what it left on stdout,
        then reports the hang-up."""
        assert self._process is not None
        self.exit_code = self._process.wait()
        _REAPER.forget(self._process.pid)
        self._drain_stderr()
        self._stderr.exited()
        self._exited.set()
        if self._reader is not None:
            self._reader.child_exited()
        else:
            self._hang_up()

    def _drain_stderr(self) -> None:
        """Read stderr until it is empty (not until it ends: a grandchild may still hold it open)."""
        stream = self._process.stderr if self._process is not None else None
        while stream is not None and not stream.closed and select.select([stream.fileno()], [], [], 0)[0]:
            self._read_stderr()

    def _hang_up(self) -> None:
        if not self._hung_up:
            self._hung_up = True
            assert self._sink is not None
            self._sink.hung_up()

    # ----- reading -----

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        try:
            chunk = os.read(self._process.stderr.fileno(), READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._stop_reading(self._process.stderr)
            self._stderr.end()
            return
        self._stderr.feed(chunk)

    def _stop_reading(self, stream: Any) -> None:
        if not stream.closed:
            assert self._loop is not None
            self._loop.remove_reader(stream.fileno())
            stream.close()

    # ----- writing -----

    def send(
        self,
        text: str,
        request_id: RequestId | None = None,
        *,
        headers: dict[str, str] | None = None,
        opens: bool = False,
    ) -> None:
        """Write one frame now, or queue it behind earlier bytes; ConnectionClosed if stdin is gone."""
        self.send_frames((text,))

    def writable(self) -> None:
        """Raise ConnectionClosed if a frame handed over now could not go out (any thread)."""
        process = self._process
        if process is None or process.stdin is None or process.stdin.closed or self._closing:
            raise ConnectionClosed("the server's stdin is closed")
        if self._write_error is not None:
            raise ConnectionClosed(self._write_error)

    def send_frames(self, texts: Sequence[str]) -> None:
        """Write frames in order, as few writes as they fit in; ConnectionClosed if stdin is gone.

        From any thread. Off the loop only whole frames that fit one atomic pipe write
        (PIPE_BUF) together are written directly, so an interrupt in the caller cannot tear
        one; a larger frame, and what follows bytes that wait, is queued for the loop to write.
        """
        on_loop = threading.get_ident() == self._loop_thread
        queued = False
        with self._write_lock:
            self.writable()
            assert self._process is not None and self._process.stdin is not None
            fd = self._process.stdin.fileno()
            for data in _writes(texts, None if on_loop else select.PIPE_BUF):
                if not self._unwritten and (on_loop or len(data) <= select.PIPE_BUF):
                    try:
                        written = os.write(fd, data)
                    except BlockingIOError:
                        written = 0
                    except OSError as exc:
                        self._write_error = f"cannot write to the server: {exc.strerror or exc}"
                        raise ConnectionClosed(self._write_error) from exc
                    if written == len(data):
                        continue
                    data = data[written:]
                if len(self._unwritten) + len(data) > MAX_UNWRITTEN_BYTES:
                    raise ConnectionClosed("the server has stopped reading its stdin")
                self._unwritten += data
                queued = True
        if not queued:
            return
        assert self._loop is not None
        if on_loop:
            self._watch_stdin()
        else:
            self._loop.call_soon_threadsafe(self._watch_stdin)

    def _watch_stdin(self) -> None:
        """Have the loop flush `_unwritten` once stdin can take it (loop thread)."""
        assert self._process is not None and self._process.stdin is not None and self._loop is not None
        with self._write_lock:
            if self._unwritten and not self._writer_on and not self._process.stdin.closed:
                self._loop.add_writer(self._process.stdin.fileno(), self._flush)
                self._writer_on = True

    def _flush(self) -> None:
        assert self._process is not None and self._process.stdin is not None and self._loop is not None
        fd = self._process.stdin.fileno()
        with self._write_lock:
            try:
                written = os.write(fd, self._unwritten)
            except BlockingIOError:
                return
            except OSError as exc:
                self._write_error = f"cannot write to the server: {exc.strerror or exc}"
                self._events("write-failed", note=self._write_error, dropped=len(self._unwritten))
                written = len(self._unwritten)
            del self._unwritten[:written]
            if not self._unwritten:
                self._loop.remove_writer(fd)
                self._writer_on = False

    def initialized(self, protocol_version: str) -> None:
        """A pipe has no version headers and no listening stream: only the era probe is over."""
        self._stderr.probe_over(self._drain_stderr)

    async def listening(self) -> None:
        """A pipe carries the server's requests from the first byte: nothing to wait for."""

    def reset_session(self) -> None:
        """Nothing to do: a stdio server has no session apart from its process."""

    def probe_began(self) -> None:
        self._stderr.probe_began()

    def probe_refused(self) -> None:
        """Nothing to do: the process keeps no state of ours between requests."""

    def use_modern(self, protocol_version: str) -> None:
        """The version travels in each request's `_meta`: only the era probe is over."""
        self._stderr.probe_over(self._drain_stderr)

    def cancel(self, request_id: RequestId) -> None:
        """Nothing to do: on stdio the session cancels with notifications/cancelled."""

    # ----- stopping -----

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait for the child to exit after it hung up; its exit code, or None if it lingers."""
        if self._process is None:
            return None
        with anyio.move_on_after(timeout):
            await self._exited.wait()
        return self.exit_code

    async def aclose(self, grace: float | None = None) -> None:
        """Shut down as the spec says: close stdin, wait `grace` seconds, SIGTERM, wait, SIGKILL."""
        process = self._process
        if process is None or self._closing:
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            assert process.stdin is not None and self._loop is not None
            with self._write_lock:  # no other thread is writing to the pipe as it closes
                if not process.stdin.closed:
                    if self._writer_on:
                        self._loop.remove_writer(process.stdin.fileno())
                        self._writer_on = False
                    process.stdin.close()
            exit_grace = self._exit_grace if grace is None else grace
            for sig, wait in ((None, exit_grace), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, KILL_WAIT)):
                if sig is not None:
                    self._signal_group(sig)
                with anyio.move_on_after(wait):
                    await self._exited.wait()
                    break
            if self._reader is not None:
                await self._reader.stop()  # drops a line the exit cut off: it may hold up to a frame's worth
            if process.stdout is not None:
                process.stdout.close()
            if process.stderr is not None:
                self._stop_reading(process.stderr)
            self._stderr.drop_partial()
            with self._write_lock:
                self._unwritten = bytearray()
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
