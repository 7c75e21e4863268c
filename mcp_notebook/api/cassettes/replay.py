"""`mcp_notebook.replay(path)`: play a saved session (a cassette) as a server and connect to it.

The cassette server is a child process of this interpreter (`python -m mcp_notebook.replay`),
over stdio or, with `transport="http"`, Streamable HTTP on 127.0.0.1 (stopped when the
connection closes). No server needs to be installed, and nothing leaves the machine. The
connection opens in the cassette's era, so it asks what the recorded client asked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from ...base.errors import UsageError
from ...cassette import MATCH_MODES, CassetteError, load
from ...demo_server import DemoServerProcess
from ...demo_server._launch import LISTENING
from ...runtime import get_runtime
from ...session.era import AUTO, ERAS
from ..connecting.connect import connect
from ..connecting.demo import _load_magics
from ..connection import Connection, session_of

START_TIMEOUT = 30.0


def command(path: str | Path, *, match: str = "params", http: bool = False) -> list[str]:
    """The argv that serves the cassette at `path` with this interpreter."""
    argv = [sys.executable, "-m", "mcp_notebook.replay", str(Path(path).resolve()), "--match", match]
    return [*argv, "--http", "--exit-with-stdin"] if http else argv


def replay(
    path: str | Path,
    *,
    name: str = "replay",
    transport: str = "stdio",
    match: str = "params",
    load_magics: bool = True,
    **connect_options: Any,
) -> Connection:
    """Serve the cassette at `path` (a trace saved with `conn.trace.to_jsonl`) and connect to it.

    Each request is answered with its recorded reply, matched by `match`: "params" (method
    and params, the default), "method" (the next recording of the method) or "order" (the
    next recorded request); the recorded server requests and notifications come where they
    came. A request nothing recorded answers gets a JSON-RPC error naming the closest
    recording. `transport` is "stdio" or "http"; `connect_options` are `connect()`'s (the era
    defaults to the cassette's). Inside IPython the `%mcp` magics are loaded too.
    """
    if transport not in ("stdio", "http"):
        raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
    if match not in MATCH_MODES:
        raise ValueError(f"match must be one of {MATCH_MODES}, not {match!r}")
    try:
        tape = load(path)
    except CassetteError as exc:
        raise UsageError(str(exc)) from None
    connect_options.setdefault("era", tape.era if tape.era in ERAS else AUTO)
    if load_magics:
        _load_magics()
    if transport == "stdio":
        return connect(command(path, match=match), name=name, **connect_options)
    process = DemoServerProcess(command(path, match=match, http=True))
    try:
        url = process.stderr_log.wait_for(LISTENING, START_TIMEOUT).group(1)
        conn = connect(url, name=name, transport="http", **connect_options)
    except BaseException:
        process.stop()
        raise
    get_runtime().spawn(_stop_when_closed, conn, process)
    return conn


async def _stop_when_closed(conn: Connection, process: DemoServerProcess) -> None:
    try:
        await session_of(conn).wait_closed()
    finally:
        if process.stdin is not None:
            process.stdin.close()  # the server exits when its stdin closes
        await anyio.to_thread.run_sync(process.stop, abandon_on_cancel=True)
