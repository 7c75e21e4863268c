"""Who the client is to an authorization server, in the spec's order of preference:
credentials registered beforehand, a Client ID Metadata Document URL when the server
supports them, else Dynamic Client Registration (RFC 7591). And how the client proves it at
the token endpoint: `client_secret_basic`, `client_secret_post`, `none`, or a signed JWT
(`private_key_jwt`, RFC 7523) made with joserfc.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from ..base.errors import AuthorizationError
from .config import OAuth
from .discovery import Discovered
from .exchange import AuthExchange, oauth_error

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
KEY_TYPES = ("EC", "RSA", "OKP")
ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512", "RSA": "RS256", "Ed25519": "EdDSA"}


class NotOffered(AuthorizationError):
    """The server publishes no OAuth at all (no metadata, no default endpoints): its 401 stands."""


@dataclass(frozen=True)
class ClientIdentity:
    """A client id at one authorization server, and how it authenticates there."""

    client_id: str
    method: str  # token endpoint authentication method
    source: str  # "pre-registered", "metadata document", "registered"
    secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    redirect_uris: Sequence[str] = ()  # those registered with it, when this client registered itself


def secret_method(found: Discovered) -> str:
    """How to send a client secret: the first of basic and post the server lists (basic when it
    lists none: RFC 8414's default)."""
    listed = found.metadata.get("token_endpoint_auth_methods_supported")
    if not isinstance(listed, list) or not listed:
        return "client_secret_basic"
    return next((m for m in SECRET_METHODS if m in listed), "client_secret_basic")


async def identify(
    http: AuthExchange, options: OAuth, found: Discovered, redirect_uris: list[str], grants: list[str], scopes: tuple[str, ...]
) -> ClientIdentity:
    """The client's identity at `found`'s authorization server: given, a document URL, or registered."""
    if options.client_id is not None:
        if options.private_key is not None:
            method = "private_key_jwt"
        elif options.client_secret is not None:
            method = secret_method(found)
        else:
            method = "none"
        http.step("client", f"pre-registered client {options.client_id} ({method})", client_id=options.client_id)
        return ClientIdentity(
            options.client_id,
            method,
            "pre-registered",
            secret=options.client_secret,
            private_key=options.private_key,
            signing_algorithm=options.signing_algorithm,
        )
    if options.client_metadata_url is not None and found.metadata.get("client_id_metadata_document_supported") is True:
        http.step("client", f"client id metadata document {options.client_metadata_url}", client_id=options.client_metadata_url)
        return ClientIdentity(options.client_metadata_url, "none", "metadata document")
    return await _register(http, options, found, redirect_uris, grants, scopes)


async def _register(
    http: AuthExchange, options: OAuth, found: Discovered, redirect_uris: list[str], grants: list[str], scopes: tuple[str, ...]
) -> ClientIdentity:
    """RFC 7591; the scopes registered are those asked for now and all the resource offers, so
    a server that holds clients to their registered scopes still allows a later step-up."""
    endpoint = found.metadata.get("registration_endpoint")
    if not isinstance(endpoint, str):
        raise AuthorizationError(
            f"the authorization server {found.issuer} offers no dynamic client registration: register a client there "
            "and pass OAuth(client_id=..., client_secret=...)"
        )
    listed = found.metadata.get("token_endpoint_auth_methods_supported")
    wanted = "none" if not isinstance(listed, list) or "none" in listed else secret_method(found)
    loopback = all(urlsplit(uri).hostname in ("127.0.0.1", "localhost", "::1") for uri in redirect_uris)
    request: dict[str, object] = {
        "client_name": options.client_name,
        "redirect_uris": redirect_uris,
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": "native" if loopback else "web",
    }
    if "authorization_code" not in grants:  # the device grant: no redirect, no response type
        request |= {"redirect_uris": [], "response_types": [], "application_type": "native"}
    registered = tuple(dict.fromkeys((*scopes, *(found.scopes_supported or ()))))
    if registered:
        request["scope"] = " ".join(registered)
    status, answer = await http.post("registration", endpoint, body=request)
    if status not in (200, 201) or not answer or not isinstance(answer.get("client_id"), str):
        if found.defaults:
            raise NotOffered(f"no OAuth here: no metadata, and the default registration endpoint answered HTTP {status}")
        raise oauth_error("client registration", status, answer)
    secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
    http.secret(secret)
    method = answer.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        method = wanted if wanted != "none" or secret is None else secret_method(found)
    how = "a public client: no secret" if method == "none" else f"authenticating with {method}"
    http.step("client", f"registered as client {answer['client_id']} ({how})", client_id=answer["client_id"])
    return ClientIdentity(answer["client_id"], method, "registered", secret=secret, redirect_uris=tuple(redirect_uris))


def authenticate(client: ClientIdentity, form: dict[str, str], audience: str) -> dict[str, str]:
    """Add the client's credentials to a token request's `form`; the headers to send with it."""
    form["client_id"] = client.client_id  # with Basic too: not a second credential, and some servers want it
    if client.method == "client_secret_basic" and client.secret is not None:
        pair = f"{quote(client.client_id, safe='')}:{quote(client.secret, safe='')}"  # RFC 6749 2.3.1: form-encoded first
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    if client.method == "client_secret_post" and client.secret is not None:
        form["client_secret"] = client.secret
    elif client.method == "private_key_jwt":
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = client_assertion(client, audience)
    return {}


def client_assertion(client: ClientIdentity, audience: str) -> str:
    """A JWT that proves the client holds its private key (RFC 7523 section 2.2)."""
    from joserfc import jwt  # here: it loads `cryptography`, which only private_key_jwt needs

    assert client.private_key is not None
    key = _import_key(client.private_key)
    algorithm = client.signing_algorithm or _algorithm_for(key)
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": secrets.token_urlsafe(16),
    }
    return jwt.encode({"alg": algorithm, "typ": "JWT"}, claims, key, algorithms=[algorithm])


def _import_key(pem: str) -> Any:
    from joserfc.jwk import JWKRegistry

    for key_type in KEY_TYPES:
        try:
            return JWKRegistry.import_key(pem, key_type)
        except Exception:  # noqa: BLE001 - not this type of key: try the next
            continue
    raise AuthorizationError("the private key is not a PEM EC, RSA or Ed25519 key")


def _algorithm_for(key: Any) -> str:
    if key.key_type == "RSA":
        return "RS256"
    return ALGORITHMS.get(getattr(key, "curve_name", ""), "ES256")
