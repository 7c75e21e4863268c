"""stdio: one JSON-RPC message per line on stdin and stdout; logs go to stderr only.

Every request runs in its own task (a slow tool call does not hold up a ping);
notifications and responses are handled in the read loop, in arrival order, so a
`notifications/cancelled` acts before the next line is read.

With `--era both` the process is served in the era the client opens with: an
`initialize` selects legacy, a request whose `_meta` declares a protocol version
selects modern, and the choice holds for the life of the process. Before either,
requests are served as a legacy session before `initialize` (only ping works).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

import anyio

from ..protocol import jsonrpc as rpc
from . import _modern
from ._app import App, RpcError, cancel, log, serve
from ._legacy import LegacySession


async def stdin_lines() -> AsyncIterator[bytes]:
    """Lines of stdin until EOF, read by a daemon thread (a blocked read never holds up exit).

    The thread reads the file descriptor with os.read, not sys.stdin: a daemon thread
    blocked inside a buffered file's lock makes the interpreter abort at exit.
    """
    send, receive = anyio.create_memory_object_stream[bytes](16)
    token = anyio.lowlevel.current_token()
    fd = sys.stdin.fileno()

    def read() -> None:
        pending = b""
        try:
            while chunk := os.read(fd, 65536):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    anyio.from_thread.run(send.send, line, token=token)
            if pending:
                anyio.from_thread.run(send.send, pending, token=token)
            anyio.from_thread.run(send.aclose, token=token)
        except Exception:  # noqa: BLE001 - the loop is gone: the server is exiting anyway
            pass

    threading.Thread(target=read, name="demo-server stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line


class StdoutLines:
    """The outbox of every stdio request: stdout, one message per line, in order."""

    def __init__(self, on_closed: Callable[[], None]) -> None:
        self._file = open(sys.stdout.fileno(), "wb", closefd=False)  # lives as long as the process
        self._lock = anyio.Lock()
        self._on_closed = on_closed
        self._closed = False

    def _write(self, data: bytes) -> None:
        try:
            self._file.write(data)
            self._file.flush()
        except OSError:
            self._closed = True

    async def _line(self, text: str) -> None:
        async with self._lock:
            if not self._closed:
                await anyio.to_thread.run_sync(self._write, text.encode("utf-8") + b"\n")
                if self._closed:
                    log("stdout is closed: exiting")
                    self._on_closed()

    async def send(self, message: dict[str, Any]) -> None:
        await self._line(rpc.encode(message))

    async def send_text(self, text: str) -> None:
        await self._line(text)

    async def finish(self, reply: dict[str, Any]) -> None:
        await self._line(rpc.encode(reply))

    async def abandon(self) -> None:
        """Nothing to close on a shared channel."""

    async def hold(self) -> None:
        """Withholding a response on stdio is simply not writing it."""

    async def send_to_client(self, message: dict[str, Any]) -> bool:
        await self.send(message)
        return True


class StdioServer:
    def __init__(self, app: App) -> None:
        self.app = app
        self.era: str | None = None if app.era == "both" else app.era  # None: not chosen yet
        self.modern_in_flight: dict[Any, anyio.CancelScope] = {}

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self.tg = tg
            self.out = StdoutLines(on_closed=tg.cancel_scope.cancel)
            self.legacy = LegacySession(self.app, self.out.send_to_client)
            tg.start_soon(self.legacy.run_pings)
            log(f"serving MCP on stdio, era {self.app.era}")
            async for line in stdin_lines():
                self.on_line(line)
            log("stdin closed: exiting")
            tg.cancel_scope.cancel()

    def _reply_soon(self, reply: dict[str, Any]) -> None:
        self.tg.start_soon(self.out.finish, reply)

    def on_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        frame = rpc.decode(text)
        if frame.kind == rpc.INVALID:
            code = rpc.PARSE_ERROR if frame.message is None else rpc.INVALID_REQUEST
            log(f"invalid frame from the client: {frame.problem}")
            self._reply_soon(rpc.error(frame.id if rpc.is_valid_id(frame.id) else None, code, frame.problem or ""))
            return
        if frame.kind == rpc.BATCH:
            self._reply_soon(rpc.error(None, rpc.INVALID_REQUEST, "JSON-RPC batches are not supported"))
            return
        if self._era_of(frame) == "modern":
            self._modern(frame)
        else:
            self._legacy(frame)

    def _era_of(self, frame: rpc.Frame) -> str:
        if self.era is None and frame.kind == rpc.REQUEST:
            if frame.method == "initialize":
                self.era = "legacy"
            elif _modern.declared_version(frame.message) is not None:
                self.era = "modern"
                self.legacy.close()
            if self.era is not None:
                log(f"era both: the client opened with {frame.method}: serving this process as {self.era}")
        return self.era or "legacy"

    def _legacy(self, frame: rpc.Frame) -> None:
        if frame.kind == rpc.REQUEST:
            call = self.legacy.call(frame.message, self.out)
            self.tg.start_soon(serve, self.app, call, self.legacy.handle, self.legacy.in_flight)
        elif frame.kind == rpc.NOTIFICATION:
            self.legacy.on_notification(frame.message)
        else:
            self.legacy.on_response(frame.message)

    def _modern(self, frame: rpc.Frame) -> None:
        if frame.kind == rpc.NOTIFICATION:
            if frame.method == "notifications/cancelled":
                cancel(self.app, self.modern_in_flight, frame.message)
            return
        if frame.kind != rpc.REQUEST:
            log(f"ignoring a response from the client (there are no server requests in this era): id={frame.id!r}")
            return
        if frame.method == "initialize":
            self._reply_soon(_modern.reject_initialize(frame.message))
            return
        try:
            call = _modern.call(self.app, frame.message, self.out)
        except RpcError as exc:
            self._reply_soon(exc.reply(frame.id))
            return
        self.tg.start_soon(serve, self.app, call, partial(_modern.handle, self.app), self.modern_in_flight)


async def serve_stdio(app: App) -> None:
    await StdioServer(app).run()
