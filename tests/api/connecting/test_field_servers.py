"""The servers a new user meets most, connected as a new user would: the default era, the first try.

Python SDK 1.x servers: `mcp-server-calculator` (PyPI, FastMCP 1.x) over stateful Streamable
HTTP and over stdio, and `mcp-proxy` (PyPI) serving it over Streamable HTTP and HTTP+SSE. Before,
the FastMCP 1.x and mcp-proxy HTTP servers stranded the default connect for its whole timeout
(the probe's 400 named a session the server had ended; initialize went out with it, met 404,
and waited); the stdio one's ninety-odd validation errors for the probe became its last words.

They run from `.venv-sdk1` (`make .venv-sdk1`, which `make test` builds, from
tests/peers/sdk1/requirements.txt): mcp 1.x cannot share the main venv. Each server runs in a
process group of its own, stopped and reaped at the end of its test. Connect times are printed
(`-s` shows them), never asserted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from support.servers import REPO, SERVERS_DIR, free_port, wait_for_port

import mcp_notebook

SDK1 = REPO / ".venv-sdk1" / "bin"
CALCULATOR = [str(SDK1 / "python"), "-m", "mcp_server_calculator"]
ERA_HTTP = [sys.executable, str(SERVERS_DIR / "era_http_server.py")]
PROBE_NOISE = "Failed to validate request"  # the first of the SDK 1.x server's lines about server/discover


def sdk1() -> None:
    if not (SDK1 / "python").is_file() or not (SDK1 / "mcp-proxy").is_file():
        pytest.skip("the Python SDK 1.x peers are not installed (.venv-sdk1 missing): run `make .venv-sdk1`")


@contextlib.contextmanager
def running(argv: list[str], port: int) -> Iterator[str]:
    """A server on 127.0.0.1:port for the block, in a process group of its own; its base URL.
    The group is stopped (SIGTERM, then SIGKILL) and the server reaped afterwards: mcp-proxy's
    stdio child goes with it."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, timeout=60.0)
        yield f"http://127.0.0.1:{port}"
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue


def calculator_http(port: int) -> contextlib.AbstractContextManager[str]:
    return running([str(SDK1 / "python"), str(SERVERS_DIR / "sdk1_calculator_http.py"), str(port)], port)


def mcp_proxy(port: int) -> contextlib.AbstractContextManager[str]:
    return running([str(SDK1 / "mcp-proxy"), "--host", "127.0.0.1", "--port", str(port), "--", *CALCULATOR], port)


def timed_connect(target: str | list[str], name: str) -> tuple[mcp_notebook.Connection, float]:
    started = time.perf_counter()
    conn = mcp_notebook.connect(target, name=name, timeout=30)
    seconds = time.perf_counter() - started
    print(f"\nconnect {name} (default era): {seconds * 1000:.0f} ms, {conn.era} ({conn.health.era_source})")
    return conn, seconds


def first_try(conn: mcp_notebook.Connection) -> None:
    """One probe, one initialize, answered at once: no timeout, no recovery, no second attempt."""
    sent = [e.method for e in conn.trace.frames("out") if e.kind == "request"]
    assert sent[:2] == ["server/discover", "initialize"] and sent.count("initialize") == 1, sent
    assert conn.health.session_recoveries == 0
    assert conn.request("tools/call", {"name": "calculate", "arguments": {"expression": "6*7"}})["content"][0]["text"] == "42"


@pytest.mark.parametrize(("server", "path"), [(calculator_http, "/mcp"), (mcp_proxy, "/mcp")])
def test_sdk1_stateful_http_servers_connect_with_the_default_era_on_the_first_try(server, path):
    sdk1()
    port = free_port()
    with server(port) as base:
        conn, _ = timed_connect(base + path, name=server.__name__)
        with conn:
            assert conn.era == "legacy" and conn.health.era_source == "probe: server/discover answered HTTP 400"
            assert [tool["name"] for tool in conn.list_tools()] == ["calculate"]
            first_try(conn)
            assert conn._session.transport.session_id is not None  # the initialize answer's, accepted since


def test_mcp_proxy_over_http_sse_connects_with_the_default_era_on_the_first_try():
    sdk1()
    port = free_port()
    with mcp_proxy(port) as base:
        conn, _ = timed_connect(base + "/sse", name="mcp_proxy_sse")
        with conn:
            assert conn.era == "legacy" and conn.health.transport == "sse"
            assert [tool["name"] for tool in conn.list_tools()] == ["calculate"]
            first_try(conn)


def test_a_server_answering_the_probe_with_500_connects_with_the_default_era_on_the_first_try():
    port = free_port()
    with running([*ERA_HTTP, str(port)], port) as base:
        conn, _ = timed_connect(base + "/probe-500", name="probe_500")
        with conn:
            assert conn.era == "legacy" and conn.health.era_source == "probe: server/discover answered HTTP 500"
            assert [tool["name"] for tool in conn.list_tools()] == ["echo"]


def test_an_sdk1_stdio_server_s_answer_to_the_probe_is_never_its_last_words():
    sdk1()
    conn, _ = timed_connect(CALCULATOR, name="calculator_stdio")
    with conn:
        assert conn.era == "legacy"
        assert conn.health.era_source == "probe: server/discover refused: Invalid request parameters (-32602)"
        probed = [e for e in conn.trace.entries() if e.kind == "stderr" and e.detail.get("during") == "era probe"]
        assert len(probed) > 50 and probed[0].detail["line"].startswith(PROBE_NOISE)
        assert not any(PROBE_NOISE in line for line in conn.stderr)
        assert not any(PROBE_NOISE in line for line in conn.health.stderr_tail)
        assert PROBE_NOISE not in str(conn.health)
        noted = [e.note or "" for e in conn.trace.entries() if e.kind == "probe-stderr"]
        assert noted == [f"{len(probed)} stderr lines written while probed, not its last words"]
        first_try(conn)


def test_the_doctor_names_the_probe_and_what_it_concluded():
    sdk1()
    port = free_port()
    with calculator_http(port) as base:
        diagnosis = mcp_notebook.doctor(base + "/mcp", live=False, timeout=30)
    assert diagnosis.ok, diagnosis.text()
    step = diagnosis.step("era probe")
    assert step.status == "ok"
    assert step.detail.startswith("server/discover: HTTP 400, application/json, JSON-RPC error -32600"), step.detail
    assert "concluded: legacy (server/discover answered HTTP 400): the handshake follows on a clean slate" in step.detail
    assert diagnosis.step("handshake").status == "ok"


def test_the_doctor_names_a_probe_answered_with_500():
    port = free_port()
    with running([*ERA_HTTP, str(port)], port) as base:
        diagnosis = mcp_notebook.doctor(base + "/probe-500", live=False)
    step = diagnosis.step("era probe")
    assert step.status == "ok"
    assert step.detail.startswith("server/discover: HTTP 500, text/plain, no JSON-RPC answer"), step.detail
    assert "concluded: legacy (server/discover answered HTTP 500)" in step.detail
    assert diagnosis.step("handshake").status == "ok"
