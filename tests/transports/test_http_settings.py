"""Every HTTP request the package makes follows one configuration: proxies (from the
environment or `proxy=`), `NO_PROXY`, the trusted roots (`verify=`, `SSL_CERT_FILE`).

The proxy is a real one, proxy.py from PyPI, on 127.0.0.1; its access log says which
requests went through it. The TLS server is the official SDK's, served by uvicorn with a
certificate from a throwaway CA (trustme).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from support.servers import free_port, sdk_server_cmd, wait_for_port

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.api.connecting.demo import follow_redirect
from mcp_notebook.demo_server import OAuthSettings

SERVERS = Path(__file__).parents[1] / "servers"
DEMO_STDIO = [sys.executable, "-m", "mcp_notebook.demo_server"]


class Proxy:
    """proxy.py listening on 127.0.0.1, with a plugin that logs each request it passes on."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "requests.log"
        self.log.touch()
        argv = [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", str(self.port)]
        argv += ["--num-acceptors", "1", "--threaded", "--plugins", "proxy_request_log.RequestLog"]
        env = {**os.environ, "PROXY_REQUEST_LOG": str(self.log), "PYTHONPATH": str(SERVERS)}
        with open(tmp_path / "proxy.out", "wb") as out:  # one acceptor, threads: two processes in a group of their own
            self.process = subprocess.Popen(argv, stdout=out, stderr=out, env=env, start_new_session=True)
        wait_for_port(self.port)

    def requests(self, port: int) -> list[tuple[str, str]]:
        """(method, path) of each request the proxy passed on to 127.0.0.1:`port`."""
        found = []
        for line in self.log.read_text().splitlines():
            method, origin, target = line.split(" ", 2)
            if origin == f"127.0.0.1:{port}":
                path = target.split("://", 1)[-1].partition("/")[2] if "://" in target else target.lstrip("/")
                found.append((method, path.partition("?")[0]))
        return found

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Proxy]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    running = Proxy(tmp_path)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def demo_http() -> Iterator[tuple[str, int]]:
    process, url = demo_server.start_http()
    try:
        yield url, int(url.rsplit(":", 1)[1].split("/")[0])
    finally:
        process.stop()


def test_the_transport_and_the_authorization_flow_go_through_the_environments_proxy(proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    process, url = demo_server.start_http(oauth=OAuthSettings())
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        with mcp_notebook.connect(url, era="legacy", auth=mcp_notebook.OAuth(authorize=follow_redirect)) as conn:
            assert conn.call_tool("add", a=2, b=3).text == "5"
    finally:
        process.stop()
    through = proxy.requests(port)
    assert ("POST", "mcp") in through and ("GET", "mcp") in through  # the POSTs and the listening stream
    assert ("GET", ".well-known/oauth-protected-resource/mcp") in through  # discovery
    assert ("POST", "register") in through and ("POST", "token") in through  # the flow's own client
    assert ("GET", "authorize") in through  # the demo's stand-in for a browser
    assert ("DELETE", "mcp") in through  # closing the session


def test_hosts_no_proxy_names_are_reached_directly(proxy, demo_http, monkeypatch):
    url, port = demo_http
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "example.org,127.0.0.1")
    with mcp_notebook.connect(url, era="legacy", name="direct") as conn:
        assert conn.ping() > 0
    assert proxy.requests(port) == []


def test_an_explicit_proxy_is_used_without_the_environment_and_an_empty_one_means_none(proxy, demo_http, monkeypatch):
    url, port = demo_http
    with mcp_notebook.connect(url, era="legacy", name="explicit", proxy=proxy.url) as conn:
        assert conn.ping() > 0
    sent = len(proxy.requests(port))
    assert sent >= 3  # initialize, initialized, ping (and the stream)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with mcp_notebook.connect(url, era="legacy", name="none", proxy="") as conn:
        assert conn.ping() > 0
    assert len(proxy.requests(port)) == sent


def test_the_command_line_client_goes_through_the_proxy(proxy, demo_http):
    url, port = demo_http
    env = {**os.environ, "HTTP_PROXY": proxy.url}
    run = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", url, "--call", "add", "--arguments", '{"a": 1, "b": 2}'],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert ("POST", "mcp") in proxy.requests(port)


@contextlib.contextmanager
def sdk_https(tmp_path: Path) -> Iterator[tuple[str, trustme.CA]]:
    ca = trustme.CA()
    cert, key, bundle = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    issued = ca.issue_cert("127.0.0.1", "localhost")
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(bundle))
    port = free_port()
    argv = sdk_server_cmd("--transport", "streamable-http", "--port", str(port), "--tls", str(cert), str(key))
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port)
        yield f"https://127.0.0.1:{port}/mcp", ca
    finally:
        process.terminate()
        process.wait(10)


def test_a_certificate_from_an_unknown_root_is_refused_and_trusted_once_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with sdk_https(tmp_path) as (url, _ca):
        with pytest.raises(mcp_notebook.McpNotebookError, match="(?i)certificate"):
            mcp_notebook.connect(url, era="legacy", name="untrusted", timeout=10)
        with mcp_notebook.connect(url, era="legacy", name="named", verify=str(tmp_path / "ca.pem")) as conn:
            assert conn.call_tool("echo", text="over tls").text == "over tls"
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
        with mcp_notebook.connect(url, era="legacy", name="from-env") as conn:
            assert conn.ping() > 0


def test_a_verify_that_names_no_file_is_a_one_line_error():
    with pytest.raises(mcp_notebook.UsageError, match="verify: no CA bundle at '/no/such/ca.pem'"):
        mcp_notebook.connect("https://127.0.0.1:9/mcp", verify="/no/such/ca.pem")


def test_the_command_line_client_runs_a_server_command_with_no_oauth_options():
    # It used to hand every target an OAuth(...) object, which a command refuses.
    run = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "--call", "add", "--arguments", '{"a": 1, "b": 2}', "--", *DEMO_STDIO],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "connected: mcp-notebook-demo" in run.stdout and "3" in run.stdout


def test_no_module_but_http_client_makes_an_httpx2_client_or_sends_past_one():
    # The rule that keeps proxies, trusted roots and timeouts the same for every request.
    package = Path(mcp_notebook.__file__).parent
    made = re.compile(r"httpx2\.(Async)?Client\(|httpx2\.(get|post|put|delete|head|options|request|stream)\(")
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        if path.name != "http_client.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if made.search(line)
    ]
    assert found == []
