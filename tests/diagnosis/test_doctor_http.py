"""The connection doctor over HTTP: each failing step from a real cause (nothing listening, an
HTML page, a self-signed or expired certificate, a 401 with broken metadata), and `ok` on
server-everything (Streamable HTTP, and HTTP+SSE through the fallback) and the demo server."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.http_servers import RAW_HTTP, everything, serving
from support.servers import free_port

import mcp_notebook
from mcp_notebook.diagnosis.report import Step

pytestmark = [pytest.mark.node]

STEPS = [
    "URL",
    "DNS",
    "TCP connect",
    "TLS",
    "initialize POST",
    "authorization",
    "session id",
    "listening stream",
    "HTTP+SSE fallback",
    "era probe",
    "handshake",
    "version and era",
    "ping",
    "listings",
]


def statuses(diagnosis: mcp_notebook.Diagnosis) -> dict[str, str]:
    return {step.name: step.status for step in diagnosis.steps}


def failed_at(diagnosis: mcp_notebook.Diagnosis, name: str) -> Step:
    """Assert the diagnosis stopped at `name` (nothing before it failed, everything after skipped); that step."""
    assert not diagnosis.ok and [step.name for step in diagnosis.steps] == STEPS
    at = STEPS.index(name)
    assert all(step.status in ("ok", "warn", "skipped") for step in diagnosis.steps[:at]), diagnosis.text()
    assert diagnosis.steps[at].status == "fail", diagnosis.text()
    assert all(step.status == "skipped" and step.detail == f"not run: {name} failed" for step in diagnosis.steps[at + 1 :])
    return diagnosis.steps[at]


# ----- certificates and a TLS server, made here


def certificate(tmp_path: Path, *, expired: bool = False, issuer: tuple[Any, x509.Name] | None = None) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (self-signed, or signed by `issuer`): its PEM and its key's PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "doctor-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = (
        (now - datetime.timedelta(days=30), now - datetime.timedelta(days=1))
        if expired
        else (now, now + datetime.timedelta(days=30))
    )
    signing_key, issuer_name = issuer if issuer is not None else (key, name)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    )
    cert = builder.sign(signing_key, hashes.SHA256())
    cert_path, key_path = tmp_path / f"cert-{id(builder)}.pem", tmp_path / f"key-{id(builder)}.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def authority(tmp_path: Path) -> tuple[Path, tuple[Any, x509.Name]]:
    """A CA certificate (its PEM) and what signs with it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "doctor-test-ca")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=60))
        .not_valid_after(now + datetime.timedelta(days=60))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = tmp_path / "ca.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, (key, name)


SESSION = "sess-4b1d-9f3e-77aa"


class Handler(BaseHTTPRequestHandler):
    """404 for everything, or (`server.prm`) a 401 whose resource metadata lists no authorization server;
    (`server.redirect`) a POST off /mcp redirected there (`{port}`: this server's)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        prm = getattr(self.server, "prm", None)
        if prm is not None and self.path.startswith("/.well-known/oauth-protected-resource"):
            body = json.dumps(prm).replace("{port}", str(self.server.server_address[1]))
            self._send(200, body.encode(), {"Content-Type": "application/json"})
        else:
            self._send(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
        redirect = getattr(self.server, "redirect", None)
        if redirect is not None and self.path != "/mcp":
            self._send(307, b"", {"Location": redirect.replace("{port}", str(self.server.server_address[1]))})
        elif getattr(self.server, "forgets", False):  # a session on one node, the next request on another
            if body.get("method") == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "lb", "version": "0"}}
                answer = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
                self._send(200, answer, {"Content-Type": "application/json", "Mcp-Session-Id": SESSION})
            else:
                self._send(404, b'{"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}}')
        elif getattr(self.server, "get_only", False):
            self._send(405, b"", {"Allow": "GET, HEAD"})
        elif getattr(self.server, "prm", None) is not None:
            port = self.server.server_address[1]
            challenge = f'Bearer resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
            self._send(401, b"", {"WWW-Authenticate": challenge})
        else:
            self._send(404, b"not here", {"Content-Type": "text/plain"})


@contextlib.contextmanager
def http_server(
    tls: tuple[Path, Path] | None = None,
    prm: dict[str, Any] | None = None,
    get_only: bool = False,
    forgets: bool = False,
    redirect: str | None = None,
) -> Iterator[int]:
    """A small server on 127.0.0.1 in a thread for the block (TLS with `tls`); its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.prm = prm  # type: ignore[attr-defined]
    server.get_only = get_only  # type: ignore[attr-defined]
    server.forgets = forgets  # type: ignore[attr-defined]
    server.redirect = redirect  # type: ignore[attr-defined]
    server.handle_error = lambda request, address: None  # type: ignore[method-assign]  # refused handshakes are expected
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# ----- each failing step


def test_nothing_listening_fails_at_tcp_connect(port):
    step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/mcp", live=False), "TCP connect")
    assert "nothing is listening on port" in step.detail and "Connection refused" in step.detail


def test_a_url_that_does_not_parse_fails_at_the_url():
    step = failed_at(mcp_notebook.doctor("http://127.0.0.1:99999/mcp", live=False), "URL")
    assert "does not parse" in step.detail


def test_a_host_that_does_not_resolve_fails_at_dns():
    step = failed_at(mcp_notebook.doctor("http://no-such-host.invalid/mcp", live=False), "DNS")
    assert "does not resolve" in step.detail


def test_an_html_page_is_named(port):
    with serving([*RAW_HTTP, str(port)], port) as base:
        step = failed_at(mcp_notebook.doctor(base + "/html", live=False), "initialize POST")
    assert "HTTP 200 OK, text/html: an HTML page" in step.detail and "/mcp" in step.hint


def test_a_self_signed_certificate_is_named(tmp_path):
    with http_server(tls=certificate(tmp_path)) as port:
        step = failed_at(mcp_notebook.doctor(f"https://127.0.0.1:{port}/mcp", live=False), "TLS")
    assert step.detail.startswith("the certificate is self-signed: CN=doctor-test")
    assert "SSL_CERT_FILE" in step.hint


def test_an_expired_certificate_is_named(tmp_path, monkeypatch):
    ca, signer = authority(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # trusted, so what is left to find is the expiry
    with http_server(tls=certificate(tmp_path, expired=True, issuer=signer)) as port:
        step = failed_at(mcp_notebook.doctor(f"https://127.0.0.1:{port}/mcp", live=False), "TLS")
    assert step.detail.startswith("the certificate has expired")


def test_a_trusted_certificate_passes_and_a_404_path_is_named(tmp_path, monkeypatch):
    ca, signer = authority(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    with http_server(tls=certificate(tmp_path, issuer=signer)) as port:
        diagnosis = mcp_notebook.doctor(f"https://127.0.0.1:{port}/mcp", live=False)
    assert diagnosis.step("TLS").status == "ok" and "certificate for CN=doctor-test" in diagnosis.step("TLS").detail
    step = failed_at(diagnosis, "initialize POST")
    assert "HTTP 404 Not Found" in step.detail and "nothing at this path" in step.detail


def test_a_certificate_for_another_host_is_named(tmp_path, monkeypatch):
    ca, signer = authority(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    with http_server(tls=certificate(tmp_path, issuer=signer)) as port:  # made out to 127.0.0.1 only
        step = failed_at(mcp_notebook.doctor(f"https://localhost:{port}/mcp", live=False), "TLS")
    assert step.detail.startswith("the certificate is for another host name: CN=doctor-test")


def test_a_url_that_does_not_take_post_is_named_405():
    with http_server(get_only=True) as port:
        step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/", live=False), "initialize POST")
    assert "HTTP 405 Method Not Allowed" in step.detail and "does not take POST (it allows GET, HEAD)" in step.detail


def test_a_same_origin_redirect_is_followed_and_named():
    with http_server(get_only=True, redirect="/mcp") as port:
        step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/old", live=False), "initialize POST")
    assert f"(after redirects: 307 to http://127.0.0.1:{port}/mcp)" in step.detail and "(it allows GET, HEAD)" in step.detail


def test_a_redirect_to_another_origin_is_not_followed():
    with http_server(redirect="http://127.0.0.2:{port}/mcp?token=s3cr3t-value") as port:
        step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/old", live=False), "initialize POST")
    assert step.detail.startswith(f"HTTP 307: redirected to another origin (http://127.0.0.2:{port}), which the client does not")
    assert "s3cr3t" not in step.detail + step.hint


def test_a_session_id_the_server_does_not_take_back_fails_at_the_session_id():
    with http_server(forgets=True) as port:
        diagnosis = mcp_notebook.doctor(f"http://127.0.0.1:{port}/mcp", live=False)
    step = failed_at(diagnosis, "session id")
    assert "notifications/initialized with it got HTTP 404" in step.detail and "sticky sessions" in step.hint
    assert SESSION not in diagnosis.text() + diagnosis.html()  # a session id is a credential


def test_a_401_with_no_metadata_anywhere_fails_at_authorization(port):
    with serving([*RAW_HTTP, str(port)], port) as base:
        diagnosis = mcp_notebook.doctor(base + "/auth", live=False)
    assert diagnosis.step("initialize POST").status == "warn"
    step = failed_at(diagnosis, "authorization")
    assert 'WWW-Authenticate: Bearer realm="raw"' in step.detail or "WWW-Authenticate: Bearer realm=raw" in step.detail
    assert "no protected resource metadata" in step.detail and "oauth-protected-resource/auth -> 405" in step.detail


def test_a_401_whose_metadata_lists_no_authorization_server_fails_at_authorization():
    with http_server(prm={"resource": "http://127.0.0.1:{port}/mcp", "authorization_servers": []}) as port:
        step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/mcp", live=False), "authorization")
    assert "resource_metadata=" in step.detail and "lists no authorization server" in step.detail


# ----- ok on real servers


def test_server_everything_over_streamable_http_is_ok(port):
    with everything(port, "streamableHttp") as base:
        diagnosis = mcp_notebook.doctor(base + "/mcp", live=False, timeout=30)
    assert diagnosis.ok, diagnosis.text()
    found = statuses(diagnosis)
    assert [name for name, status in found.items() if status != "ok"] == ["TLS", "authorization", "HTTP+SSE fallback"]
    assert "hidden here" in diagnosis.step("session id").detail
    assert diagnosis.step("listening stream").detail.startswith("GET opens it")


def test_server_everything_over_http_sse_is_ok_through_the_fallback(port):
    with everything(port, "sse") as base:
        diagnosis = mcp_notebook.doctor(base + "/sse", live=False, timeout=30)
    assert diagnosis.ok, diagnosis.text()
    assert diagnosis.step("initialize POST").status == "warn" and "HTTP+SSE" in diagnosis.step("initialize POST").detail
    fallback = diagnosis.step("HTTP+SSE fallback")
    assert fallback.status == "ok" and "sessionId=[redacted]" in fallback.detail
    assert diagnosis.step("handshake").status == "ok"


def test_an_http_sse_endpoint_on_another_origin_fails_the_fallback_step_as_the_client_refuses_it(port):
    """tests/servers/hostile_http_server.py's /elsewhere names its POST endpoint on `localhost`."""
    hostile = [sys.executable, str(Path(__file__).parents[1] / "servers" / "hostile_http_server.py"), str(port)]
    with serving(hostile, port) as base:
        diagnosis = mcp_notebook.doctor(base + "/elsewhere", live=False, timeout=30)
    step = failed_at(diagnosis, "HTTP+SSE fallback")
    assert step.detail == (
        f"{base}/elsewhere named a POST endpoint on another origin, 'http://localhost:{port}/inbox?sessionId=[redacted]', "
        "in its HTTP+SSE endpoint event; refused: the endpoint is the server's own, and our headers and credentials stay with it"
    )
    assert "own origin" in step.hint


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_demo_server_over_http_is_ok_in_both_eras(era, port):
    argv = [sys.executable, "-m", "mcp_notebook.demo_server", "--transport", "http", "--port", str(port), "--era", era]
    with serving(argv, port) as base:
        diagnosis = mcp_notebook.doctor(base + "/mcp", live=False)
    assert diagnosis.ok, diagnosis.text()
    assert f"{era} era" in diagnosis.step("version and era").detail
    if era == "modern":  # initialize is refused, server/discover answers, as a probing client finds
        assert "a modern-era (2026-07-28) server" in diagnosis.step("initialize POST").detail
        assert diagnosis.step("session id").status == "skipped"


def test_credentials_never_reach_a_step(port):
    token, key = "tok-0123456789-secret", "key-abcdef-987654"
    with serving([*RAW_HTTP, str(port)], port) as base:
        diagnosis = mcp_notebook.doctor(f"{base}/auth?api_key={key}", headers={"Authorization": f"Bearer {token}"}, live=False)
    shown = diagnosis.text() + diagnosis.html() + json.dumps([vars(step) for step in diagnosis.steps])
    assert token not in shown and key not in shown
    assert diagnosis.target.endswith("/auth?api_key=%5Bredacted%5D") or "api_key=[redacted]" in diagnosis.target


def test_the_command_line_doctor_exits_1_on_a_port_with_nothing_listening():
    run = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "doctor", f"http://127.0.0.1:{free_port()}/mcp"], capture_output=True, text=True
    )
    assert run.returncode == 1 and "✘ TCP connect: fail" in run.stdout


def test_a_server_that_takes_the_connection_and_never_answers_fails_in_time():
    import socket

    with socket.socket() as listener:  # the kernel accepts connections; nobody reads them
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        step = failed_at(mcp_notebook.doctor(f"http://127.0.0.1:{port}/mcp", live=False, timeout=1), "initialize POST")
    assert "did not answer in time" in step.detail
