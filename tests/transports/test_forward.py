"""The tap's upstream side (`transports.forward`): a whole request leaves in one write."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from mcp_notebook.transports import forward

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


@pytest.fixture
def server() -> Iterator[str]:
    """A loopback HTTP/1.1 server answering every request `200 {}` once its body is in."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)  # accept looks at `stop` this often
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            with conn:
                data = b""
                while not stop.is_set():
                    head, _, rest = data.partition(b"\r\n\r\n")
                    length = next(
                        (
                            int(v)
                            for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
                            if k.lower() == b"content-length"
                        ),
                        0,
                    )
                    if _ and len(rest) >= length:
                        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
                        data = rest[length:]
                        continue
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        stop.set()
        listener.close()
        thread.join()


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The writes that reach each upstream connection's socket stream."""
    writes: list[bytes] = []
    made = forward._HeldWrites.__init__

    class Counting:
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            writes.append(buffer)
            await self._stream.write(buffer, timeout)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._stream, name)

    monkeypatch.setattr(forward._HeldWrites, "__init__", lambda self, stream: made(self, Counting(stream)))
    return writes


async def _send(url: str, body: bytes | AsyncIterator[bytes]) -> int:
    upstream = forward.Upstream(url)
    try:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
        answer = await upstream.send("POST", "/mcp", headers, body, may_wait=True)
        assert b"".join([chunk async for chunk in answer.chunks()]) == b"{}"
        await answer.aclose()
        return answer.status
    finally:
        await upstream.aclose()


def test_a_whole_body_leaves_with_its_head_in_one_write(server: str, monkeypatch: pytest.MonkeyPatch):
    writes = _count_writes(monkeypatch)
    assert anyio.run(_send, server, BODY) == 200
    assert len(writes) == 1
    assert writes[0].startswith(b"POST /mcp HTTP/1.1\r\n") and writes[0].endswith(b"\r\n\r\n" + BODY)


def test_a_streamed_body_is_written_as_it_comes(server: str, monkeypatch: pytest.MonkeyPatch):
    writes = _count_writes(monkeypatch)

    async def pieces() -> AsyncIterator[bytes]:
        yield BODY[:10]
        yield BODY[10:]

    assert anyio.run(_send, server, pieces()) == 200
    sent = [write for write in writes if write]
    assert len(sent) == 3 and sent[1:] == [BODY[:10], BODY[10:]]
