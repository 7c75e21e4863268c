"""Mistakes through the plain API are one-line `UsageError`s, raised before anything is sent;
and a connection that cannot be made says what actually happened."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.servers import sdk_server_cmd

import mcp_notebook

pytestmark = [pytest.mark.node]

SERVERS = Path(__file__).parents[1] / "servers"


@pytest.fixture(scope="module")
def shared_sdk() -> Iterator[mcp_notebook.Connection]:
    with mcp_notebook.connect(sdk_server_cmd(), name="sdk-input", era="legacy") as c:
        yield c


def one_line_usage_error(caught: pytest.ExceptionInfo[BaseException]) -> str:
    assert isinstance(caught.value, mcp_notebook.UsageError), repr(caught.value)
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:99999/mcp", "http://127.0.0.1:99999/mcp is not a valid URL: Port out of range 0-65535"),
        ("http://[::1/mcp", "http://[::1/mcp is not a valid URL: Invalid IPv6 URL"),
        ("http://127.0.0.1:http/mcp", "is not a valid URL: Port could not be cast to integer"),
        ("http:///mcp", "names no host"),
        ("http://127.0.0.1:0/mcp", "port 0 cannot be connected to"),
    ],
)
def test_urls_that_cannot_be_connected_to_are_usage_errors(url, says):
    with pytest.raises(Exception) as caught:
        mcp_notebook.connect(url, name="bad-url", era="legacy")
    assert says in one_line_usage_error(caught)


def test_a_url_with_a_bad_port_never_echoes_its_credentials():
    with pytest.raises(Exception) as caught:
        mcp_notebook.connect("http://user:hunter22@[::1/mcp?api_key=hunter22", name="bad-url")
    assert "hunter22" not in one_line_usage_error(caught)


@pytest.mark.parametrize("arguments", [["x"], "text=hi", [("text", "hi")], {1: "hi"}])
def test_tool_arguments_must_be_a_dict(shared_sdk, arguments):
    with pytest.raises(Exception) as caught:
        shared_sdk.call_tool("echo", arguments)
    assert "echo: the arguments must be a dict of names to values" in one_line_usage_error(caught)
    assert isinstance(caught.value, mcp_notebook.ToolArgumentError)


@pytest.mark.parametrize("timeout", [0, -1, -0.5, float("inf"), "5"])
def test_timeouts_must_be_positive_numbers(shared_sdk, timeout):
    calls = {
        "connect": lambda: mcp_notebook.connect(sdk_server_cmd(), name="never", timeout=timeout),
        "ping": lambda: shared_sdk.ping(timeout=timeout),
        "request": lambda: shared_sdk.request("tools/list", timeout=timeout),
        "call_tool": lambda: shared_sdk.call_tool("echo", {"text": "hi"}, timeout=timeout),
        "max_total": lambda: shared_sdk.call_tool("echo", {"text": "hi"}, max_total=timeout),
        "read_resource": lambda: shared_sdk.read_resource("file:///x", timeout=timeout),
    }
    before = len(shared_sdk.trace.frames("out"))
    for what, call in calls.items():
        with pytest.raises(Exception) as caught:
            call()
        assert "must be a positive number of seconds" in one_line_usage_error(caught), what
    sent = {e.method for e in shared_sdk.trace.frames("out")[before:]}
    assert not sent & {"ping", "tools/call", "resources/read"}  # refused before it went out
    assert "never" not in mcp_notebook.connections()
    assert shared_sdk.ping(timeout=30) > 0 and shared_sdk.ping(timeout=None) > 0


def test_a_probe_timeout_must_be_positive():
    with pytest.raises(Exception) as caught:
        mcp_notebook.connect(sdk_server_cmd(), name="never", probe_timeout=0)
    assert "probe_timeout must be a positive number of seconds; got 0" in one_line_usage_error(caught)


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ([str(SERVERS)], f"{str(SERVERS)!r} is a directory, not a program"),
        ([str(SERVERS / "sdk_server.py")], "is not executable: run it with its interpreter (e.g. python "),
    ],
)
def test_a_command_that_is_there_but_cannot_run_says_why(command, says):
    with pytest.raises(Exception) as caught:
        mcp_notebook.connect(command, name="cannot-run")
    message = one_line_usage_error(caught)
    assert says in message and "not found" not in message


def test_a_command_that_is_not_there_still_says_not_found():
    with pytest.raises(mcp_notebook.HandshakeError, match="'no-such-mcp-server' not found on PATH"):
        mcp_notebook.connect(["no-such-mcp-server"], name="missing")


def test_an_http_server_that_never_answers_is_not_asked_about_stdio():
    """A listening socket nobody accepts from: the TCP handshake completes (the kernel's
    backlog), the POST goes out, and no HTTP response ever comes."""
    with socket.create_server(("127.0.0.1", 0), backlog=4) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with pytest.raises(mcp_notebook.HandshakeError) as caught:
            mcp_notebook.connect(url, name="silent", era="legacy", timeout=1)
    message = str(caught.value)
    assert f"{url} took the connection but sent no answer to initialize in time" in message
    assert "stdio" not in message and "\n" not in message


def test_a_stdio_server_that_never_answers_is_asked_about_stdio():
    with pytest.raises(mcp_notebook.HandshakeError, match="is it an MCP server on stdio"):
        mcp_notebook.connect([sys.executable, str(SERVERS / "raw_server.py"), "--silent"], name="mute", era="legacy", timeout=1)
