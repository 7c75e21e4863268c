"""Closing: the spec's stdio shutdown, interpreter exit, and processes that linger."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcp_notebook

REPO = Path(__file__).resolve().parents[2]
RAW = [sys.executable, str(REPO / "tests" / "servers" / "raw_server.py")]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_close_escalates_to_sigterm_for_a_server_that_ignores_eof():
    conn = mcp_notebook.connect([*RAW, "--linger"], name="linger")
    pid = conn._session.transport.pid
    conn.close()
    assert not alive(pid)
    events = [(e.kind, e.detail) for e in conn.trace.entries() if e.kind in ("signal", "exit")]
    assert events == [("signal", {"signal": "SIGTERM"}), ("exit", {"code": -15})]


def test_a_server_that_exits_on_eof_gets_no_signal():
    conn = mcp_notebook.connect(RAW, name="polite")
    conn.close()
    assert [e.kind for e in conn.trace.entries() if e.kind in ("signal", "exit")] == ["exit"]
    assert conn.health.exit_code == 0


def test_interpreter_exit_closes_every_session_and_reaps_every_server():
    code = f"""
import json, mcp_notebook
a = mcp_notebook.connect({[*RAW, "--linger"]!r}, name="a")
b = mcp_notebook.connect({RAW!r}, name="b")
print(json.dumps([a._session.transport.pid, b._session.transport.pid]), flush=True)
# no close(): the interpreter exits with both open
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    pids = json.loads(done.stdout.strip().splitlines()[-1])
    assert [alive(pid) for pid in pids] == [False, False]


def test_a_transport_that_fails_to_close_still_ends_the_session():
    # A failure while the transport closes (an HTTP client that raised in its DELETE, say) used to
    # leave the session's end unsignalled: close() then waited for ever.
    conn = mcp_notebook.demo("failing-close", load_magics=False, keepalive=None)
    transport = conn._session.transport
    real_close = transport.aclose

    async def failing_close(grace: float | None = None) -> None:
        await real_close(grace)  # the server is still stopped: no process outlives the test
        raise RuntimeError("the transport could not close cleanly")

    transport.aclose = failing_close  # type: ignore[method-assign]
    conn.close()
    assert conn.state == "closed"
    failed = [e for e in conn.trace.entries() if e.kind == "close-failed"]
    assert [e.note for e in failed] == ["RuntimeError: the transport could not close cleanly"]
