"""Known secrets (credential headers, bearer tokens, credential-looking query values, and
`secrets=`) never leave a connection: not in an error whose message a server made from them,
not in a log line or progress message, not in the repr or status of a stdio connection whose
command line holds one, and not in a request a redirect would send to another origin."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import pytest
from support.http_servers import RAW_HTTP, sdk_http, serving

import mcp_notebook

TOKEN = "tok-" + "b34r3r" * 4  # the bearer token, from --bearer-token-env
KEY = "key-" + "4p1k3y" * 4  # an api_key query value
HEADER = "hdr-" + "x4p1" * 5  # an X-Api-Key header value
LISTED = "lst-" + "s3cr" * 5  # given as secrets=[...]
RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def everything_shown(exc: BaseException) -> str:
    """All an exception can show: its traceback text, args, attributes, and those of its causes."""
    shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return shown + repr(exc.args) + repr(vars(exc))


def test_server_errors_that_quote_a_known_secret_are_redacted(port, monkeypatch, capsys):
    """The official SDK's server quotes an unknown prompt's name and an unknown resource's URI in
    its JSON-RPC error: whichever known secret is in them never reaches the exception."""
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    with (
        sdk_http(port) as base,
        mcp_notebook.connect(
            f"{base}/mcp?api_key={KEY}",
            name="secret",
            era="legacy",
            bearer_token_env="MCP_TEST_TOKEN",
            headers={"X-Api-Key": HEADER},
            secrets=[LISTED],
        ) as conn,
    ):
        for secret in (TOKEN, KEY, HEADER, LISTED):
            with pytest.raises(mcp_notebook.McpError) as raw:  # the raw request path
                conn.request("prompts/get", {"name": f"p-{secret}"})
            with pytest.raises(mcp_notebook.McpError) as featured:  # a feature method, as a cell calls it
                conn.read_resource(f"file:///x?q={secret}")
            for caught in (raw, featured):
                assert "[redacted]" in str(caught.value) and "[redacted]" in caught.value.message
                assert secret not in everything_shown(caught.value), secret
        assert conn.ping() > 0  # the session is unharmed
    assert not any(secret in capsys.readouterr().out for secret in (TOKEN, KEY, HEADER, LISTED))


def test_log_lines_and_progress_that_quote_a_secret_are_redacted(shown_as, capsys):
    """What a server says while a call waits is shown in the cell (and kept in the log store)."""
    shown_as("ipython")
    with mcp_notebook.connect([*RAW, "--name", "raw"], name="talker", era="legacy", secrets=[LISTED]) as conn:
        result = conn.call_tool("say", {"text": f"the key is {LISTED}"}, validate=False)
        assert "said" in result.text
        cell = capsys.readouterr()
        assert "the key is [redacted]" in cell.out  # the log line, printed in the cell
        assert "the key is [redacted]" in cell.err  # the progress line
        assert LISTED not in cell.out + cell.err
        assert LISTED not in repr(conn.logs.records()) and LISTED not in repr(conn.stderr)


def test_a_stdio_command_line_secret_stays_out_of_repr_status_and_health(shell_of, capsys):
    """`python -X mcp_token=…` carries the secret on the command line (Python keeps unknown -X
    options to itself), as `--token …` would for a real server."""
    argv = [*RAW[:1], "-X", f"mcp_token={LISTED}", *RAW[1:]]
    with mcp_notebook.connect(argv, name="argv", era="legacy", secrets=[LISTED]) as conn:
        assert "[redacted]" in repr(conn) and LISTED not in repr(conn)
        assert LISTED not in conn.health.endpoint and "[redacted]" in conn.health.endpoint
        shell = shell_of()
        shell.run_line_magic("mcp", "status argv")
        shell.run_line_magic("mcp", "health argv --stderr")
        shell.run_line_magic("mcp", "trace argv")
        shell.run_line_magic("mcp", "dashboard")
        out = capsys.readouterr().out
        assert "command    " in out and "[redacted]" in out
        assert LISTED not in out


@pytest.fixture
def shell_of():
    from IPython.core.interactiveshell import InteractiveShell

    made = []

    def make():
        ip = InteractiveShell.instance()
        if not made:
            ip.run_line_magic("load_ext", "mcp_notebook")
            made.append(ip)
        return ip

    yield make
    if made:
        made[0].run_line_magic("unload_ext", "mcp_notebook")
        InteractiveShell.clear_instance()


def test_a_redirect_to_another_origin_is_refused_and_sends_nothing_there(port):
    """A 307 to another host would carry every header we send (X-Api-Key included: httpx drops
    only Authorization), so it is refused in one line that names where it pointed."""
    with serving([*RAW_HTTP, str(port)], port) as base:
        with pytest.raises(mcp_notebook.HandshakeError) as caught:
            mcp_notebook.connect(
                base + "/moved", name="moved", era="legacy", transport="http", headers={"X-Api-Key": HEADER}, timeout=10
            )
    message = str(caught.value)
    assert f"redirected to another origin (http://localhost:{port})" in message
    assert "\n" not in message and HEADER not in message


def test_a_redirect_on_the_same_origin_is_followed(port):
    with serving([*RAW_HTTP, str(port)], port) as base:
        with mcp_notebook.connect(
            base + "/same", name="same", era="legacy", transport="http", headers={"X-Api-Key": HEADER}
        ) as conn:
            assert conn.ping() > 0
            hops = [
                (e.detail["method"], e.detail["url"].rsplit("/", 1)[-1], e.detail["status"])
                for e in conn.trace
                if e.kind == "http"
            ]
    assert hops[0] == ("POST", "mcp", 200)  # asked at /same, answered at /mcp after the 307


def test_a_connect_error_that_quotes_stderr_redacts_a_secret():
    script = f"import sys; print('starting with {LISTED}', file=sys.stderr); sys.exit(4)"
    with pytest.raises(mcp_notebook.HandshakeError) as caught:
        mcp_notebook.connect([sys.executable, "-c", script], name="leaky", secrets=[LISTED], era="legacy")
    assert "exited with code 4" in str(caught.value) and "starting with [redacted]" in str(caught.value)
    assert LISTED not in everything_shown(caught.value)
