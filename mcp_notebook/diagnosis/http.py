"""The doctor's HTTP steps: what an `initialize` POST gets back (status and content type, an
HTML page, a 404 path or a 405 named as such), the `Mcp-Session-Id`, the GET listening
stream, and the HTTP+SSE (2024-11-05) fallback, whose endpoint on another origin fails as
the client refuses it (a 401's challenge is `diagnosis.auth`'s).

The requests go through the transports layer's `HttpProbe` (one blocking client in the
caller's thread, on the connection's HTTP settings), each bounded by the step's time limit;
redirects are followed only on the same origin (our headers stay with the host named). A
session the steps open is ended with DELETE when the diagnosis ends.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import urljoin

from ..api.connecting.targets import http_settings
from ..base.errors import TransportError
from ..protocol import modern
from ..protocol.versions import LATEST_LEGACY, MODERN_VERSIONS
from ..session.era import MODERN
from ..transports.http_errors import redact_url, same_origin_endpoint
from ..transports.http_probe import HttpProbe, ProbeFailed, Reply, event_data, origin_of
from .context import Context
from .report import Step
from .stdio import CLIENT_INFO, PROBE_ID

MAX_BODY = 256 * 1024
MAX_REDIRECTS = 5
ACCEPT = "application/json, text/event-stream"
TITLE = re.compile(r"<title[^>]*>(.*?)</title", re.I | re.S)  # of an HTML page answered instead of MCP


def _client(ctx: Context) -> HttpProbe:
    client = ctx.facts.get("client")
    if client is None:
        client = HttpProbe(http_settings(ctx.options), ctx.timeout)  # the connection's proxy and roots
        ctx.facts["client"] = client
        ctx.cleanups.insert(0, client.close)  # closed last, after the session is ended
    return client


def _modern(ctx: Context) -> bool:
    """Whether the probe is `server/discover`: asked for, or what the server turned out to speak."""
    return ctx.asked is MODERN or bool(ctx.facts.get("modern"))


def _probe(ctx: Context) -> tuple[dict[str, Any], dict[str, str]]:
    """The first request and its extra headers: `initialize`, or `server/discover` (modern)."""
    if _modern(ctx):
        version = ctx.options.protocol_version or MODERN_VERSIONS[0]
        params = modern.with_meta(None, version, CLIENT_INFO, {})
        return {"jsonrpc": "2.0", "id": PROBE_ID, "method": "server/discover", "params": params}, modern.request_headers(
            "server/discover", params, version
        )
    params = {"protocolVersion": ctx.options.protocol_version or LATEST_LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": PROBE_ID, "method": "initialize", "params": params}, {}


def _message(body: str, content_type: str) -> Any:
    """The JSON of a body, or of the first SSE event with data."""
    if "event-stream" in content_type:
        data = event_data(body)
        body = data[0] if data else ""
    try:
        return json.loads(body)
    except ValueError:
        return None


def _post(ctx: Context) -> Reply | Step:
    """POST the probe, following same-origin redirects; the reply with its body, or a failed step."""
    client, url = _client(ctx), ctx.facts["url"]
    body, extra = _probe(ctx)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", **ctx.headers(), **extra}
    deadline = time.monotonic() + ctx.timeout
    for _ in range(MAX_REDIRECTS):
        try:
            reply = client.request("POST", url, json=body, headers=headers, limit=MAX_BODY, deadline=deadline)
        except ProbeFailed as exc:
            return ctx.fail(str(exc), "the steps above passed, so the server took the connection and then failed")
        if reply.location is not None:
            if origin_of(reply.location) != origin_of(reply.url):
                scheme, host, port = origin_of(reply.location)
                return ctx.fail(
                    f"HTTP {reply.status}: redirected to another origin ({scheme}://{host}:{port}), "
                    "which the client does not follow (your headers would go there)",
                    "connect to the new URL itself if you trust it",
                )
            url = reply.location
            ctx.facts.setdefault("redirected", []).append(f"{reply.status} to {redact_url(url)}")
            continue
        ctx.facts["url"] = url
        return reply
    return ctx.fail(f"more than {MAX_REDIRECTS} redirects", "give the URL the redirects end on")


def initialize(ctx: Context) -> Step:
    """The probe POST: its HTTP status and content type, and whether the body answers it."""
    response = _post(ctx)
    if isinstance(response, Step):
        return response
    status, reason, body, content_type = response.status, response.reason, response.body, response.content_type
    ctx.facts.update(status=status, response_headers=response.headers)
    head = f"HTTP {status} {reason}".rstrip() + f", {content_type or 'no content type'}"
    moved = f" (after redirects: {', '.join(ctx.facts['redirected'])})" if ctx.facts.get("redirected") else ""
    if status == 401:
        ctx.facts["auth"] = True
        return ctx.warn(f"{head}: the server wants authorization{moved}", "the next step reads what it asks for")
    if status == 400 and ctx.asked is None and not ctx.facts.get("modern") and _rpc_error(body):
        modern_step = _modern_instead(ctx, head + _rpc_error(body))
        if modern_step is not None:
            return modern_step
    refused = _refused(ctx, response, body, head + moved)
    if refused is not None:
        return refused
    if content_type not in ("application/json", "text/event-stream"):
        return ctx.fail(f"{head}: not MCP (an answer is application/json or text/event-stream)", "check the URL")
    message = _message(body, content_type)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("id") != PROBE_ID:
        return ctx.fail(
            f"{head}, but the body is not a JSON-RPC answer to the request: {body[:120]!r}",
            "the server must answer with a JSON-RPC response of the same id",
        )
    ctx.facts["answer"] = message
    if "error" in message and ctx.asked is None and not ctx.facts.get("modern"):
        modern_step = _modern_instead(ctx, head)
        if modern_step is not None:
            return modern_step
    method = _probe(ctx)[0]["method"]
    if "error" in message:
        return ctx.warn(
            f"{head}: {method} answered with an error{_rpc_error(body, message)}",
            "the handshake step below tries again as a client would",
        )
    return ctx.ok(f"{head}: {method} answered{moved}")


def _modern_instead(ctx: Context, refusal: str) -> Step | None:
    """After `initialize` was refused: `server/discover`, as a probing client sends first. The
    step if the server answers it (a modern-era server), else None (the refusal stands)."""
    ctx.facts["modern"] = True
    step = initialize(ctx)
    if step.status == "ok":
        return ctx.ok(f"initialize refused ({refusal}); {step.detail}: a modern-era (2026-07-28) server")
    ctx.facts["modern"] = False
    ctx.facts.pop("answer", None)
    return None


def _refused(ctx: Context, response: Reply, body: str, head: str) -> Step | None:
    """The failed step (or the fallback's warning) for an answer that is an error or a web page."""
    status, content_type = response.status, response.content_type
    if status == 403:
        return ctx.fail(
            f"{head}: forbidden{_rpc_error(body)}",
            "the credentials sent are refused, or lack a scope: check --header / bearer_token_env",
        )
    if status in (400, 404, 405) and _legacy_endpoint(ctx):
        if ctx.options.transport == "http":
            return ctx.fail(f"{head}: this URL is an HTTP+SSE (2024-11-05) endpoint", "connect with transport='auto' or 'sse'")
        return ctx.warn(
            f"{head}: not Streamable HTTP; the URL answers GET as an HTTP+SSE (2024-11-05) endpoint", "the fallback step below"
        )
    if status == 404:
        return ctx.fail(
            f"{head}: nothing at this path{_rpc_error(body)}",
            "check the path (often /mcp); the server's log names its endpoint",
        )
    if status == 405:
        allowed = response.headers.get("allow")
        also = f" (it allows {allowed})" if allowed else ""
        return ctx.fail(
            f"{head}: this URL does not take POST{also}, so it is no Streamable HTTP endpoint", "check the path (often /mcp)"
        )
    if "html" in content_type:
        return ctx.fail(
            f"{head}: an HTML page{_title(body)}, a web page, not an MCP endpoint",
            "check the path: MCP endpoints are often at /mcp",
        )
    if status >= 400:
        return ctx.fail(f"{head}{_rpc_error(body)}", "the server's log says why it refused the request")
    return None


def _title(body: str) -> str:
    """An HTML page's title, as words of a detail."""
    title = TITLE.search(body)
    return f" titled {title.group(1).strip()[:80]!r}" if title else ""


def _rpc_error(body: str, message: Any = None) -> str:
    message = message if message is not None else _message(body, "")
    error = message.get("error") if isinstance(message, dict) else None
    if isinstance(error, dict):
        return f": {str(error.get('message', ''))[:200]} (JSON-RPC code {error.get('code')})"
    return ""


def _legacy_endpoint(ctx: Context) -> bool:
    """Whether a GET of the URL opens an HTTP+SSE stream whose first event is `endpoint`."""
    if ctx.asked is MODERN:
        return False
    headers = {"Accept": "text/event-stream", **ctx.headers()}
    try:
        reply = _client(ctx).request("GET", ctx.facts["url"], headers=headers, limit=MAX_BODY, read=_event_stream)
    except ProbeFailed:
        return False
    if not _event_stream(reply):
        return False
    found = re.search(r"^event:\s*endpoint\s*$\n^data:\s*(.*)$", reply.body, re.M)
    if found is None:
        return False
    ctx.facts["sse_endpoint"] = urljoin(ctx.facts["url"], found.group(1).strip())
    return True


def _event_stream(reply: Reply) -> bool:
    return reply.status == 200 and "event-stream" in (reply.headers.get("content-type") or "")


def _session_headers(ctx: Context) -> dict[str, str]:
    headers = dict(ctx.headers())
    if ctx.facts.get("session_id"):
        headers["Mcp-Session-Id"] = ctx.facts["session_id"]
    answer = ctx.facts.get("answer") or {}
    version = (answer.get("result") or {}).get("protocolVersion")
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = version
    return headers


def session_id(ctx: Context) -> Step:
    """The `Mcp-Session-Id` the answer carries (optional), well formed and accepted back."""
    if "answer" not in ctx.facts or "error" in ctx.facts["answer"]:
        return ctx.skip("no initialize answer to take a session from")
    if _modern(ctx):
        return ctx.skip("modern era: stateless, no session")
    value = ctx.facts["response_headers"].get("mcp-session-id")
    if value is None:
        return ctx.ok("none: a stateless server (allowed)")
    if len(value) >= 4:
        ctx.redactor.add(value)
    if not value or not all(0x21 <= ord(ch) <= 0x7E for ch in value):
        return ctx.fail(
            "the Mcp-Session-Id has characters outside visible ASCII, which the spec forbids",
            "make session ids visible ASCII (0x21-0x7E)",
        )
    ctx.facts["session_id"] = value
    client, url = _client(ctx), ctx.facts["url"]
    ctx.cleanups.append(lambda: _end_session(ctx))
    notify = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", **_session_headers(ctx)}
    try:
        answered = client.request("POST", url, json=notify, headers=headers)
    except ProbeFailed as exc:
        return ctx.fail(
            f"a session id was given; then {exc}",
            "the server must accept requests with the session id it gave",
        )
    if answered.status >= 400:
        return ctx.fail(
            f"a session id was given ({len(value)} characters, hidden here), but notifications/initialized "
            f"with it got HTTP {answered.status}",
            "the server must accept the Mcp-Session-Id it issued (behind a load balancer: sticky sessions?)",
        )
    return ctx.ok(f"a session id ({len(value)} characters, hidden here), accepted back (HTTP {answered.status})")


def _end_session(ctx: Context) -> None:
    try:
        _client(ctx).request("DELETE", ctx.facts["url"], headers=_session_headers(ctx))
    except ProbeFailed:
        pass  # ending it is a courtesy; the server forgets it in time


def listening_stream(ctx: Context) -> Step:
    """The GET listening stream: open (200, text/event-stream), or not offered (405)."""
    if "answer" not in ctx.facts or _modern(ctx):
        return ctx.skip("only after a Streamable HTTP initialize")
    headers = {"Accept": "text/event-stream", **_session_headers(ctx)}
    try:
        reply = _client(ctx).request("GET", ctx.facts["url"], headers=headers)
    except ProbeFailed as exc:
        if exc.timed_out:
            return ctx.warn(
                f"GET did not answer within {ctx.timeout:g} s", "answer the GET at once: 200 with text/event-stream, or 405"
            )
        return ctx.warn(str(exc), "answer the GET: 200 with text/event-stream, or 405")
    status, content_type = reply.status, (reply.headers.get("content-type") or "").partition(";")[0]
    if status == 200 and content_type == "text/event-stream":
        return ctx.ok("GET opens it (HTTP 200, text/event-stream): the server can send requests and notifications at any time")
    if status == 405:
        return ctx.ok("none offered (HTTP 405, allowed): server messages come only within answers to POSTs")
    return ctx.warn(
        f"GET answered HTTP {status}, {content_type or 'no content type'}",
        "answer 200 with text/event-stream, or 405 when there is no stream",
    )


def sse_fallback(ctx: Context) -> Step:
    """The HTTP+SSE (2024-11-05) transport, where the POST was refused."""
    endpoint = ctx.facts.get("sse_endpoint")
    if endpoint is None:
        return ctx.skip(
            "not needed: the URL speaks Streamable HTTP"
            if "answer" in ctx.facts or ctx.facts.get("auth")
            else "no legacy endpoint"
        )
    try:
        same_origin_endpoint(ctx.facts["url"], endpoint)  # as the client refuses it
    except TransportError as refused:
        return ctx.fail(str(refused), "an HTTP+SSE server names a POST endpoint on its own origin (scheme, host and port)")
    return ctx.ok(f"GET opens an event stream whose endpoint event says to POST to {redact_url(endpoint)}")
