"""The doctor's step after a 401: what the `WWW-Authenticate` challenge says, and whether the
protected resource metadata (RFC 9728) and the authorization server metadata it leads to
are there and sound.

The discovery is the OAuth client's own (`auth.discovery`), run on the runtime's loop, so
the doctor judges metadata exactly as a connection would; its HTTP exchanges are listed in
the step (URLs redacted), and nothing is authorized here: the handshake step does that.
"""

from __future__ import annotations

from typing import Any

from ..auth.challenge import bearer_challenge
from ..base.errors import AuthorizationError
from ..transports.urls import redact_url
from .context import Context
from .report import Step


def authorization(ctx: Context) -> Step:
    """After a 401: the challenge, and the protected resource and authorization server metadata."""
    if not ctx.facts.get("auth"):
        return ctx.skip("no 401: the server did not ask for authorization")
    headers = ctx.facts["response_headers"]
    challenges = headers.get_list("www-authenticate")
    challenge = bearer_challenge(challenges)
    if not challenges:
        said = "no WWW-Authenticate header"
    else:
        named = ", ".join(
            f"{key}={redact_url(value) if key == 'resource_metadata' else value}" for key, value in challenge.params.items()
        )
        said = (
            f"WWW-Authenticate: Bearer {named}"
            if challenge.params or "bearer" in " ".join(challenges).lower()
            else "WWW-Authenticate without a Bearer challenge"
        )
    notes: list[str] = []
    try:
        found = _discover(ctx, challenge, notes)
    except AuthorizationError as exc:
        return ctx.fail(f"{said}; {exc}{_tried(notes)}", "fix the server's protected resource metadata (RFC 9728)")
    if found.defaults:
        return ctx.fail(
            f"{said}; no protected resource metadata (RFC 9728) and no authorization server metadata{_tried(notes)}",
            "serve /.well-known/oauth-protected-resource naming the authorization server, "
            "and name it in the 401's resource_metadata",
        )
    where = f"authorization server {found.issuer}"
    if ctx.options.auth is None:
        return ctx.fail(
            f"{said}; {where}; but auth=None: the connection will not authorize", "connect with auth='auto' or an OAuth(...)"
        )
    if found.legacy:
        return ctx.warn(
            f"{said}; no protected resource metadata, {where} (as 2025-03-26 servers do)",
            "serve RFC 9728 metadata: 2025-06-18 clients look for it",
        )
    return ctx.ok(f"{said}; resource metadata names {where}; the handshake step authorizes (it may ask you)")


def _tried(notes: list[str]) -> str:
    return f" (looked at: {'; '.join(notes[:6])})" if notes else ""


def _discover(ctx: Context, challenge: Any, notes: list[str]) -> Any:
    from ..auth.discovery import discover
    from ..auth.exchange import AuthExchange
    from ..runtime import get_runtime

    def event(kind: str, note: str | None = None, **detail: Any) -> None:
        if kind == "auth-http":
            notes.append(f"{detail.get('method')} {detail.get('url')} -> {detail.get('status') or note}")

    async def run() -> Any:
        http = AuthExchange(event, ctx.redactor.add, timeout=ctx.timeout)
        try:
            return await discover(http, ctx.facts["url"], challenge)
        finally:
            await http.aclose()

    return get_runtime().call(run)
