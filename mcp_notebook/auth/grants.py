"""The grants: the authorization code with PKCE (S256), refresh, client credentials, the RFC
7523 JWT bearer grant with an assertion the user brings (workload identity federation,
SEP-1933), and cross-app access (RFC 8693 token exchange at the identity provider, then the
JWT bearer grant). Every token request carries the RFC 8707 `resource`, and a DPoP proof when
the flow has a key (retried once with the server's nonce when it asks for one); every token
answer becomes a `Token`, whose secrets (and DPoP key) never show in a repr and whose expiry
is a time a clock can show: an `expires_in` beyond `MAX_LIFETIME` (1e300, say) is taken as
that, a negative one as now, and one that is no number (text, true, NaN) as not said.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..base.errors import AuthorizationError
from ..base.sizes import seconds_within
from ..base.text import plain
from .config import CrossAppAccess
from .discovery import Discovered
from .dpop import NONCE_ERROR, DpopKey
from .exchange import AuthExchange, oauth_error
from .identity import ClientIdentity, authenticate

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
MAX_LIFETIME = 365 * 24 * 3600.0  # seconds: a token said to last longer is taken to last a year


@dataclass(frozen=True)
class Token:
    """An access token for one resource, from one authorization server."""

    access_token: str = field(repr=False)
    resource: str
    issuer: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    token_type: str = "Bearer"  # "DPoP" for a token bound to `dpop_key`
    dpop_key: str | None = field(default=None, repr=False)  # the key its requests were proven with (DpopKey.secret)

    @property
    def bound(self) -> bool:
        """Whether the token is DPoP-bound: presented with the DPoP scheme and a proof."""
        return self.token_type == "DPoP"

    def __post_init__(self) -> None:
        if self.expires_at is not None:  # a saved token's too: the file may predate the clamp
            object.__setattr__(self, "expires_at", seconds_within(self.expires_at, 0.0, time.time() + MAX_LIFETIME))

    def header(self) -> str:
        return f"{self.token_type} {self.access_token}"


@dataclass
class AuthorizationRequest:
    """One authorization request in flight: what its answer is checked against."""

    url: str
    state: str = field(repr=False)
    verifier: str = field(repr=False)
    redirect_uri: str
    issuer: str


def authorization_request(
    found: Discovered, client: ClientIdentity, redirect_uri: str, scopes: Sequence[str] | None
) -> AuthorizationRequest:
    """The authorization URL to send the user to, with PKCE, `state` and `resource`."""
    endpoint = found.metadata.get("authorization_endpoint")
    if not isinstance(endpoint, str):
        raise AuthorizationError(f"the authorization server {found.issuer} has no authorization endpoint")
    if not found.supports("code_challenge_methods_supported", "S256"):
        raise AuthorizationError(
            f"the authorization server {found.issuer} does not list PKCE with S256 (code_challenge_methods_supported); "
            "the spec forbids authorizing without it"
        )
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": found.resource,
    }
    if scopes:
        query["scope"] = " ".join(scopes)
    parts = urlsplit(endpoint)
    merged = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *query.items()])
    return AuthorizationRequest(urlunsplit((*parts[:3], merged, "")), state, verifier, redirect_uri, found.issuer)


def authorization_code(request: AuthorizationRequest, redirected_to: str, found: Discovered) -> str:
    """The code from the URL the browser was sent back to, once `state` and `iss` check out."""
    answer = dict(parse_qsl(urlsplit(redirected_to.strip()).query, keep_blank_values=True))
    if not answer:
        raise AuthorizationError("the URL given back carries no authorization response (no code, no error)")
    iss = answer.get("iss")
    if iss is not None and iss != request.issuer:  # RFC 9207: no normalization before comparing
        raise AuthorizationError(
            f"the authorization response comes from issuer {plain(iss)[:200]!r}, not {request.issuer}: ignored"
        )
    if iss is None and found.metadata.get("authorization_response_iss_parameter_supported") is True:
        raise AuthorizationError("the authorization response lacks the iss parameter its server promises (RFC 9207): ignored")
    if answer.get("state") != request.state:
        raise AuthorizationError(
            "the authorization response's state does not match the request: ignored (another flow's answer?)"
        )
    if "error" in answer:
        description = plain(answer.get("error_description", ""))[:300]
        raise AuthorizationError(
            f"authorization refused: {plain(answer['error'])[:100]}{f' ({description})' if description else ''}"
        )
    code = answer.get("code")
    if not code:
        raise AuthorizationError("the authorization response carries no code")
    return code


async def request_token(
    http: AuthExchange,
    step: str,
    found: Discovered,
    client: ClientIdentity,
    form: dict[str, str],
    scopes: Sequence[str] | None,
    previous: Token | None = None,
    dpop: DpopKey | None = None,
) -> Token:
    """POST a token request (with `resource`, the client's credentials, and a DPoP proof with a
    `dpop` key); the token it answers."""
    endpoint = found.metadata.get("token_endpoint")
    if not isinstance(endpoint, str):
        raise AuthorizationError(f"the authorization server {found.issuer} has no token endpoint")
    retried = False
    while True:
        sent = {**form, "resource": found.resource}
        headers = authenticate(client, sent, found.issuer)  # afresh each time: a client assertion is used once
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        answer = await http.post_form(step, endpoint, sent, headers)
        nonce_asked = answer.status == 400 and (answer.data or {}).get("error") == NONCE_ERROR
        if dpop is None or not dpop.take_nonce(endpoint, answer.nonces) or not nonce_asked or retried:
            break
        http.step(step, "the authorization server wants a DPoP nonce: asking again with it")
        retried = True
    status, data = answer.status, answer.data
    if status != 200 or not data or not isinstance(data.get("access_token"), str):
        raise oauth_error(step, status, data)
    http.secret(data["access_token"], data.get("refresh_token"))
    return make_token(data, found, client, scopes, previous, dpop)


def make_token(
    answer: dict[str, Any],
    found: Discovered,
    client: ClientIdentity,
    scopes: Sequence[str] | None,
    previous: Token | None,
    dpop: DpopKey | None = None,
) -> Token:
    lifetime = seconds_within(answer.get("expires_in"), 0.0, MAX_LIFETIME)
    granted = answer.get("scope")
    refresh = answer.get("refresh_token")
    bound = dpop is not None and str(answer.get("token_type", "")).lower() == "dpop"
    return Token(
        answer["access_token"],
        found.resource,
        found.issuer,
        client.client_id,
        tuple(granted.split()) if isinstance(granted, str) else tuple(scopes or ()),
        time.time() + lifetime if lifetime is not None else None,
        refresh if isinstance(refresh, str) else previous.refresh_token if previous else None,
        "DPoP" if bound else "Bearer",
        dpop.secret() if dpop is not None else None,  # a refresh token of a public client is bound to it too
    )


async def exchange_code(
    http: AuthExchange,
    found: Discovered,
    client: ClientIdentity,
    request: AuthorizationRequest,
    code: str,
    scopes: Sequence[str] | None,
    dpop: DpopKey | None = None,
) -> Token:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request.redirect_uri,
        "code_verifier": request.verifier,
    }
    return await request_token(http, "token", found, client, form, scopes, dpop=dpop)


async def refresh(
    http: AuthExchange, found: Discovered, client: ClientIdentity, token: Token, dpop: DpopKey | None = None
) -> Token:
    assert token.refresh_token is not None
    form = {"grant_type": "refresh_token", "refresh_token": token.refresh_token}
    return await request_token(http, "refresh", found, client, form, token.scopes, previous=token, dpop=dpop)


async def client_credentials(
    http: AuthExchange, found: Discovered, client: ClientIdentity, scopes: Sequence[str] | None, dpop: DpopKey | None = None
) -> Token:
    form = {"grant_type": "client_credentials"}
    if scopes:
        form["scope"] = " ".join(scopes)
    return await request_token(http, "client credentials", found, client, form, scopes, dpop=dpop)


async def jwt_bearer(
    http: AuthExchange,
    found: Discovered,
    client: ClientIdentity,
    assertion: str,
    scopes: Sequence[str] | None,
    dpop: DpopKey | None = None,
) -> Token:
    """The JWT bearer grant (RFC 7523 section 2.1) with an assertion the user brings: a workload's
    identity token (SEP-1933). Its failure is final: no retry, no other grant."""
    form = {"grant_type": JWT_BEARER, "assertion": assertion}
    if scopes:
        form["scope"] = " ".join(scopes)
    return await request_token(http, "jwt bearer", found, client, form, scopes, dpop=dpop)


async def cross_app(
    http: AuthExchange,
    found: Discovered,
    client: ClientIdentity,
    access: CrossAppAccess,
    scopes: Sequence[str] | None,
    dpop: DpopKey | None = None,
) -> Token:
    """Exchange the identity provider's ID token for an ID-JAG there, then the ID-JAG for a token."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG_TYPE,
        "subject_token": access.id_token,
        "subject_token_type": ID_TOKEN_TYPE,
        "audience": found.issuer,
        "resource": found.resource,
    }
    if scopes:
        form["scope"] = " ".join(scopes)
    idp = ClientIdentity(
        access.idp_client_id or client.client_id,
        "client_secret_post" if access.idp_client_secret else "none",
        "identity provider",
        secret=access.idp_client_secret,
    )
    headers = authenticate(idp, form, access.idp_token_endpoint)
    status, answer = await http.post("token exchange", access.idp_token_endpoint, form=form, headers=headers)
    if status != 200 or not answer or not isinstance(answer.get("access_token"), str):
        raise oauth_error("token exchange at the identity provider", status, answer)
    http.secret(answer["access_token"])
    if answer.get("issued_token_type") not in (None, ID_JAG_TYPE):
        raise AuthorizationError("the identity provider answered a token that is not an identity assertion grant (ID-JAG)")
    return await jwt_bearer(http, found, client, answer["access_token"], scopes, dpop)
