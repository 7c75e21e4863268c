"""The doctor's network steps for a URL, under HTTP: the URL parses, its host resolves, a TCP
connection opens, and (https) the TLS handshake succeeds, a certificate problem named.

Plain stdlib `socket` and `ssl`, each bounded by the step's time limit; the TLS check uses the
trust store the HTTP transport uses (httpx2's default context, which honours SSL_CERT_FILE),
so a certificate this step accepts is one the connection accepts. Every socket is closed.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from ..api.connecting.targets import http_settings
from ..base.plural import counted
from ..transports.urls import redact_url
from .context import Context
from .report import Step

DEFAULT_PORTS = {"http": 80, "https": 443}
EXPIRY_WARNING_DAYS = 14
# OpenSSL's verification codes, in words a person can act on
CERT_PROBLEMS = {
    18: (
        "the certificate is self-signed",
        "trust it for this kernel: SSL_CERT_FILE=/path/to/cert.pem (or its CA), or use http:// for a local server",
    ),
    19: (
        "the chain ends in a self-signed certificate not trusted here (a private CA, or a proxy that intercepts TLS)",
        "add that CA: SSL_CERT_FILE=/path/to/ca.pem",
    ),
    10: ("the certificate has expired", "the server's operator must renew it"),
    9: (
        "the certificate is not valid yet (check this machine's clock)",
        "check the clock, or wait for the certificate's start date",
    ),
    62: ("the certificate is for another host name", "connect with the host name the certificate names, or fix the certificate"),
    20: (
        "the certificate's issuer is not trusted here (a private CA, or a missing intermediate certificate)",
        "add the CA (SSL_CERT_FILE=...), or have the server send its full chain",
    ),
    21: ("the certificate cannot be verified (a missing intermediate certificate)", "have the server send its full chain"),
}


def url(ctx: Context) -> Step:
    """The URL has a scheme we speak, a host and a usable port."""
    text = str(ctx.target).strip()
    shown = redact_url(text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        return ctx.fail(f"{shown} does not parse: {exc}", "write it as http://HOST:PORT/PATH")
    if parts.scheme not in DEFAULT_PORTS:
        return ctx.fail(f"{shown}: the scheme {parts.scheme!r} is not http or https", "write it as http(s)://HOST:PORT/PATH")
    if not parts.hostname:
        return ctx.fail(f"{shown} names no host", "write it as http://HOST:PORT/PATH")
    if port == 0:
        return ctx.fail(f"{shown}: port 0 cannot be connected to", "use the server's port (1-65535)")
    port = port or DEFAULT_PORTS[parts.scheme]
    ctx.facts.update(url=text, scheme=parts.scheme, host=parts.hostname, port=port)
    path = parts.path or "/"
    where = f"{parts.scheme}, host {parts.hostname}, port {port}, path {path}"
    if path == "/":
        return ctx.ok(f"{where} (MCP endpoints are often at /mcp, older ones at /sse)")
    return ctx.ok(where)


def _in_thread(fn: Any, timeout: float) -> Any:
    """`fn()` in a daemon thread, waited for at most `timeout` seconds (name lookups have no
    timeout of their own); TimeoutError if it has not finished."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="doctor-lookup")
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["value"]


def dns(ctx: Context) -> Step:
    """The host name resolves to addresses."""
    host, port = ctx.facts["host"], ctx.facts["port"]
    try:
        found = _in_thread(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), ctx.timeout)
    except TimeoutError:
        return ctx.fail(f"looking up {host} took over {ctx.timeout:g} s", "check this machine's DNS (a VPN, a captive portal?)")
    except socket.gaierror as exc:
        return ctx.fail(
            f"{host} does not resolve: {exc.strerror}", "check the host name's spelling; a host on a VPN needs the VPN"
        )
    addresses: list[tuple[int, Any]] = []
    for family, _, _, _, sockaddr in found:
        if (family, sockaddr) not in addresses:
            addresses.append((family, sockaddr))
    ctx.facts["addresses"] = addresses
    shown = ", ".join(str(sockaddr[0]) for _, sockaddr in addresses)
    if shown == host:
        return ctx.ok(f"{host} is an address; nothing to look up")
    return ctx.ok(f"{host} is {shown}")


def tcp(ctx: Context) -> Step:
    """Something accepts a TCP connection at one of the addresses."""
    port, failures = ctx.facts["port"], []
    for family, sockaddr in ctx.facts["addresses"]:
        started = time.monotonic()
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(ctx.timeout)
        try:
            sock.connect(sockaddr)
        except TimeoutError:
            failures.append(f"{sockaddr[0]}: no answer within {ctx.timeout:g} s")
            continue
        except OSError as exc:
            failures.append(f"{sockaddr[0]}: {exc.strerror or exc}")
            continue
        finally:
            sock.close()
        ctx.facts["address"] = (family, sockaddr)
        return ctx.ok(f"connected to {sockaddr[0]} port {port} in {(time.monotonic() - started) * 1000:.1f} ms")
    if all("refused" in failure.lower() for failure in failures):
        return ctx.fail(
            f"nothing is listening on port {port} ({'; '.join(failures)})",
            "start the server, and check the port it prints when it starts",
        )
    return ctx.fail(f"cannot connect to port {port}: {'; '.join(failures)}", "is the server up, and is no firewall in the way?")


def tls(ctx: Context) -> Step:
    """For https: the TLS handshake with the transport's trust store, the certificate checked."""
    if ctx.facts["scheme"] != "https":
        return ctx.skip("http://: no TLS")
    host = ctx.facts["host"]
    family, sockaddr = ctx.facts["address"]
    context = http_settings(ctx.options).ssl_context()  # what the transport's client verifies with
    try:
        with _connected(family, sockaddr, ctx.timeout) as sock, context.wrap_socket(sock, server_hostname=host) as wrapped:
            version, cert = wrapped.version(), wrapped.getpeercert() or {}
    except ssl.SSLCertVerificationError as exc:
        problem, hint = CERT_PROBLEMS.get(
            exc.verify_code, (f"the certificate is refused: {exc.verify_message}", "check the certificate")
        )
        about = _unverified_certificate(family, sockaddr, host, ctx.timeout)
        return ctx.fail(f"{problem}{': ' + about if about else ''} (OpenSSL: {exc.verify_message})", hint)
    except ssl.SSLError as exc:
        if "WRONG_VERSION_NUMBER" in str(exc) or "record layer" in str(exc):
            return ctx.fail(f"port {ctx.facts['port']} does not speak TLS ({exc.reason})", "use http:// for this server")
        return ctx.fail(f"the TLS handshake failed: {exc.reason or exc}", "check the server's TLS setup")
    except TimeoutError:
        return ctx.fail(f"the TLS handshake took over {ctx.timeout:g} s", "is this port an https server?")
    except OSError as exc:
        return ctx.fail(f"the TLS handshake failed: {exc.strerror or exc}", "check the server's TLS setup")
    subject = _name(cert.get("subject"))
    expires = cert.get("notAfter")
    detail = f"{version}, certificate for {subject or host}"
    if isinstance(expires, str):
        ends = datetime.fromtimestamp(ssl.cert_time_to_seconds(expires), tz=timezone.utc)
        left = (ends - datetime.now(timezone.utc)).days
        detail += f", valid until {ends:%Y-%m-%d}"
        if left < EXPIRY_WARNING_DAYS:
            return ctx.warn(f"{detail}: it expires in {counted(left, 'day')}", "renew the certificate")
    return ctx.ok(detail)


class _connected:
    """A TCP socket connected with a timeout, closed on leaving."""

    def __init__(self, family: int, sockaddr: Any, timeout: float) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sockaddr = sockaddr

    def __enter__(self) -> socket.socket:
        try:
            self.sock.connect(self.sockaddr)
        except BaseException:
            self.sock.close()
            raise
        return self.sock

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def _name(rdns: Any) -> str:
    """`CN=..., O=...` of a certificate's subject as `getpeercert()` gives it."""
    parts = [f"{key}={value}" for rdn in rdns or () for key, value in rdn if key in ("commonName", "organizationName")]
    return ", ".join(part.replace("commonName", "CN").replace("organizationName", "O") for part in parts)


def _unverified_certificate(family: int, sockaddr: Any, host: str, timeout: float) -> str:
    """Who the refused certificate names and until when, read without verifying it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with _connected(family, sockaddr, timeout) as sock, context.wrap_socket(sock, server_hostname=host) as wrapped:
            der = wrapped.getpeercert(binary_form=True)
    except OSError:
        return ""
    if not der:
        return ""
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    subject = cert.subject.rfc4514_string()
    ends = cert.not_valid_after_utc
    for_names = f" for {', '.join(names[:5])}" if names else ""
    return f"{subject}{for_names}, valid until {ends:%Y-%m-%d}"
