"""One-line explanations of HTTP failures that say what to do, URL redaction, and the
refusal of URLs a server names on another origin (the redaction itself is `urls`', re-exported here).

Nothing here may echo a credential: URLs are redacted, header values never quoted, and no
request follows a redirect, or an HTTP+SSE `endpoint` event, off the origin the user named
(it would carry our headers there: API keys, cookies, the session id, the access token).
"""

from __future__ import annotations

import json
import ssl

import httpx2

from ..base.errors import TransportError
from .urls import REDACTED, SECRET_WORDS, is_secret_name, redact_url

__all__ = [
    "REDACTED",
    "SECRET_WORDS",
    "CrossOriginRedirect",
    "describe_failure",
    "describe_status",
    "is_json_rpc",
    "is_secret_name",
    "origin",
    "redact_url",
    "refuse_cross_origin_redirects",
    "same_origin_endpoint",
]


class CrossOriginRedirect(httpx2.HTTPError):
    """The server redirected to another origin (scheme, host or port), which we do not follow."""

    def __init__(self, target: httpx2.URL) -> None:
        scheme, host, port = origin(target)
        self.target = f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
        super().__init__(f"redirected to another origin, {self.target}")


def origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    """Scheme, host and effective port: what a redirect must keep to stay where it was."""
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


async def refuse_cross_origin_redirects(response: httpx2.Response) -> None:
    """A response hook: a redirect that would leave the request's origin raises instead of being
    followed, so no header we send (API keys, cookies, the session id) goes to a host the user
    never named. Same-origin redirects are followed as usual."""
    if response.has_redirect_location:
        source = response.request.url
        target = source.join(response.headers["location"])
        if origin(target) != origin(source):
            raise CrossOriginRedirect(target)


def same_origin_endpoint(url: str, endpoint: str) -> str:
    """`endpoint` (an absolute URL an HTTP+SSE server named for our POSTs), if it is on `url`'s
    origin; else TransportError: the 2024-11-05 transport's POST endpoint is the server's own."""
    try:
        elsewhere = origin(httpx2.URL(endpoint)) != origin(httpx2.URL(url))
    except httpx2.InvalidURL:
        elsewhere = True
    if elsewhere:
        raise TransportError(
            f"{redact_url(url)} named a POST endpoint on another origin, {ascii(redact_url(endpoint))[:200]}, in its HTTP+SSE "
            "endpoint event; refused: the endpoint is the server's own, and our headers and credentials stay with it"
        )
    return endpoint


def describe_failure(exc: Exception, where: str) -> str:
    """Why an HTTP exchange with `where` failed, in words a user can act on."""
    if isinstance(exc, CrossOriginRedirect):
        return (
            f"{where} redirected to another origin ({exc.target}); not followed, so our headers and "
            "credentials stay with the host you named: connect to the new URL itself if you trust it"
        )
    if isinstance(exc, httpx2.ConnectError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ssl.SSLError) or "SSL" in str(exc) or "certificate" in str(exc).lower():
            return (
                f"TLS handshake with {where} failed ({_first_line(exc)}); "
                "check the certificate, or use http:// for a local server"
            )
        return f"cannot connect to {where}: {_first_line(exc) or 'connection refused'}; is the server running on that port?"
    if isinstance(exc, httpx2.TimeoutException):
        return f"{where} did not answer in time ({type(exc).__name__}); is it up, and is the URL right?"
    if isinstance(exc, httpx2.UnsupportedProtocol):
        return f"{where} is not an http:// or https:// URL"
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError)):
        return f"{where} closed the connection unexpectedly ({_first_line(exc) or type(exc).__name__})"
    return f"HTTP request to {where} failed: {_first_line(exc) or type(exc).__name__}"


def describe_status(response: httpx2.Response, body: str, where: str) -> str:
    """Why an HTTP error status or an unexpected body is not an MCP answer, and what to try."""
    status = response.status_code
    content_type = response.headers.get("content-type", "").partition(";")[0].strip() or "no content type"
    detail = _json_rpc_message(body)
    head = f"{where} answered HTTP {status} {response.reason_phrase}".rstrip()
    if status in (401, 403):
        hint = (
            "the server wants credentials: pass headers={'Authorization': 'Bearer …'} or bearer_token_env='VAR' "
            "(--header or --bearer-token-env in %mcp connect and python -m mcp_notebook), or OAuth with auth=OAuth(...)"
        )
        if response.headers.get("www-authenticate"):
            hint += " (it sent WWW-Authenticate)"
        return f"{head}{': ' + detail if detail else ''}; {hint}"
    if "html" in content_type:
        return f"{head} with an HTML page, not MCP; check the URL (MCP endpoints are often at /mcp)"
    if status < 400:
        return f"{head} with {content_type}, not MCP (expected application/json or text/event-stream); check the URL"
    return f"{head}{': ' + detail if detail else ''}"


def no_mcp_endpoint(where: str, post_status: int | None, get_why: str) -> TransportError:
    """Why a URL is no MCP endpoint, in one line: what POST (Streamable HTTP) and GET (HTTP+SSE) met."""
    if post_status == 404 and get_why == "HTTP 404":
        return TransportError(f"{where} answered 404 to POST and GET: no MCP endpoint there (check the path, often /mcp)")
    post = f"POST answered {post_status}" if post_status is not None else "not tried"
    return TransportError(f"{where} offers neither Streamable HTTP ({post}) nor HTTP+SSE (GET: {get_why or 'no event stream'})")


def is_json_rpc(body: str) -> bool:
    """Whether an HTTP error body is a JSON-RPC answer (an MCP server's refusal), not a page."""
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("jsonrpc") == "2.0" and ("error" in data or "result" in data)


def _json_rpc_message(body: str) -> str:
    """The message of a JSON-RPC error in an HTTP error body (often without an id), if any."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return f"{error['message']} (JSON-RPC code {error.get('code')})"
    return ""


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""
