"""The demo's authorization server, in the same process as the MCP endpoint it protects.

RFC 8414 metadata (S256 PKCE only, `iss` in responses), dynamic client registration (RFC
7591), an authorization endpoint that approves at once (it is a demo: no login page) and
redirects with `code`, `state` and `iss` (RFC 9207), and a token endpoint with the
`authorization_code` grant (PKCE checked, the RFC 8707 `resource` checked, the client
authenticated as registered), the `refresh_token` grant (refresh tokens rotate) and the
device authorization grant (RFC 8628, in `_device`: approved by itself after a poll). It keeps
the access tokens it issued for the resource side (`_guard`) to look up.

Every secret it issues starts with `demo-` and a kind (`demo-at-`, `demo-rt-`, `demo-code-`,
`demo-cs-`, `demo-dc-`), is never logged on stderr, and goes to `issued_log` when one is set.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ._app import log
from ._device import GRANT_TYPE as DEVICE_GRANT
from ._device import DeviceGrants, DeviceRefusal
from ._h11 import Exchange, Request
from ._oauth_settings import BASE_SCOPE, STEP_UP_SCOPE, OAuthSettings

METADATA_PATH = "/.well-known/oauth-authorization-server"
SCOPES = (BASE_SCOPE, STEP_UP_SCOPE)
DEFAULT_LIFETIME = 3600
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
JSON_NO_STORE = [("cache-control", "no-store")]


@dataclass
class Client:
    client_id: str
    secret: str | None
    redirect_uris: list[str]
    method: str


@dataclass
class Grant:
    """What an access token (or the code or refresh token behind it) stands for."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str
    expires_at: float = 0.0
    calls: int = 0  # tools/call requests made with this access token
    redirect_uri: str = ""
    challenge: str = ""


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


class AuthServer:
    """Issues and remembers clients, codes and tokens for one resource (the `/mcp` endpoint)."""

    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self.issuer = ""
        self.resource = ""
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Grant] = {}
        self.access: dict[str, Grant] = {}
        self.refresh: dict[str, Grant] = {}
        self.refreshes = 0  # refresh requests answered so far (for the `refreshes` fault switch)
        self.devices = DeviceGrants(settings)

    def bind(self, origin: str, resource_path: str) -> None:
        """Learn where we listen, once bound: the issuer is the origin, the resource its `/mcp`."""
        self.issuer = origin
        self.resource = origin + resource_path

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "device_authorization_endpoint": f"{self.issuer}/device_authorization",
            "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "authorization_response_iss_parameter_supported": True,
        }

    def paths(self) -> tuple[str, ...]:
        return (METADATA_PATH, "/register", "/authorize", "/token", "/device_authorization", "/device")

    async def __call__(self, request: Request, exchange: Exchange) -> None:
        try:
            if request.path == METADATA_PATH and request.method == "GET":
                await exchange.reply(200, self.metadata())
            elif request.path == "/register" and request.method == "POST":
                await exchange.reply(201, self.register(request), JSON_NO_STORE)
            elif request.path == "/authorize" and request.method == "GET":
                await exchange.reply(302, headers=[("location", self.authorize(dict(parse_qsl(request.query))))])
            elif request.path == "/token" and request.method == "POST":
                await exchange.reply(200, self.token(request), JSON_NO_STORE)
            elif request.path == "/device_authorization" and request.method == "POST":
                await exchange.reply(200, self.device_authorization(request), JSON_NO_STORE)
            elif request.path == "/device" and request.method == "GET":
                await exchange.reply(200, self.devices.page(dict(parse_qsl(request.query)).get("user_code")))
            else:
                await exchange.reply(405)
        except OAuthError as exc:
            log(f"oauth: {request.path} refused: {exc.error}: {exc.description}")
            await exchange.reply(exc.status, {"error": exc.error, "error_description": exc.description}, JSON_NO_STORE)

    # ----- registration and authorization -----

    def register(self, request: Request) -> dict[str, Any]:
        try:
            body = json.loads(request.body)
        except ValueError:
            raise OAuthError("invalid_client_metadata", "the body is not JSON") from None
        uris = body.get("redirect_uris") if isinstance(body, dict) else None
        grants = body.get("grant_types") if isinstance(body, dict) else None
        if not uris and isinstance(grants, list) and grants and "authorization_code" not in grants:
            uris = []  # a client of grants without a redirect (the device grant) registers none
        elif not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs")
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            raise OAuthError("invalid_client_metadata", f"token_endpoint_auth_method must be one of {AUTH_METHODS}")
        client = Client(f"demo-client-{len(self.clients) + 1}", None, uris, method)
        if method != "none":
            client.secret = self._issue("cs")
        self.clients[client.client_id] = client
        log(f"oauth: registered {client.client_id} (token_endpoint_auth_method {method})")
        answer = {**body, "client_id": client.client_id, "client_id_issued_at": int(time.time())}
        if client.secret is not None:
            answer |= {"client_secret": client.secret, "client_secret_expires_at": 0}
        return answer

    def authorize(self, query: dict[str, str]) -> str:
        """Approve at once: where to redirect the browser (with a code, or with an error)."""
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None:
            raise OAuthError("invalid_client", "unknown client_id")
        if redirect_uri not in client.redirect_uris:
            raise OAuthError("invalid_request", "redirect_uri is not one the client registered")
        answer = {"state": query["state"]} if "state" in query else {}
        try:
            if query.get("response_type") != "code":
                raise OAuthError("unsupported_response_type", "only response_type=code")
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                raise OAuthError("invalid_request", "PKCE with code_challenge_method=S256 is required")
            resource = self._resource(query.get("resource"))
            code = self._issue("code")
            self.codes[code] = Grant(
                client.client_id, self._scopes(query.get("scope")), resource, redirect_uri=redirect_uri,
                challenge=query["code_challenge"],
            )  # fmt: skip
            log(f"oauth: approved {client.client_id} for scopes {' '.join(self.codes[code].scopes)}")
            answer = {"code": code, **answer}
        except OAuthError as exc:
            answer = {"error": exc.error, "error_description": exc.description, **answer}
        answer["iss"] = self.issuer
        separator = "&" if urlsplit(redirect_uri).query else "?"
        return redirect_uri + separator + urlencode(answer)

    def _scopes(self, requested: str | None) -> tuple[str, ...]:
        granted = tuple(scope for scope in (requested or BASE_SCOPE).split() if scope in SCOPES)
        return granted or (BASE_SCOPE,)

    def _resource(self, resource: str | None) -> str:
        if resource is not None and resource.rstrip("/") != self.resource:
            raise OAuthError("invalid_target", f"this server issues tokens for {self.resource} only")
        return self.resource

    # ----- the token endpoint -----

    def token(self, request: Request) -> dict[str, Any]:
        form = dict(parse_qsl(request.body.decode("utf-8", "replace")))
        client = self._client(request, form)
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if grant is None or grant.client_id != client.client_id:
                raise OAuthError("invalid_grant", "unknown, used or another client's code")
            if form.get("redirect_uri") != grant.redirect_uri:
                raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace")).digest())
            if digest.rstrip(b"=").decode("ascii") != grant.challenge:
                raise OAuthError("invalid_grant", "the code_verifier does not match the code_challenge (PKCE)")
            self._resource(form.get("resource"))
            return self._tokens(grant, "authorization code")
        if grant_type == "refresh_token":
            grant = self.refresh.pop(form.get("refresh_token", ""), None)
            if grant is None or grant.client_id != client.client_id:
                raise OAuthError("invalid_grant", "unknown, used or another client's refresh token")
            self._resource(form.get("resource"))
            self.refreshes += 1
            limit = self.settings.refreshes
            if limit is not None and self.refreshes > limit:
                raise OAuthError("invalid_grant", f"fault switch refreshes={limit}: later refreshes are refused")
            return self._tokens(grant, "refresh")
        if grant_type == DEVICE_GRANT:
            self._resource(form.get("resource"))
            try:
                device = self.devices.poll(form.get("device_code", ""), client.client_id)
            except DeviceRefusal as exc:
                raise OAuthError(exc.error, exc.description) from None
            return self._tokens(Grant(device.client_id, device.scopes, device.resource), "device code")
        raise OAuthError("unsupported_grant_type", f"authorization_code, refresh_token or {DEVICE_GRANT}")

    def device_authorization(self, request: Request) -> dict[str, Any]:
        """RFC 8628 section 3.1: a device code for an authenticated client, its scopes and resource."""
        form = dict(parse_qsl(request.body.decode("utf-8", "replace")))
        client = self._client(request, form)
        resource = self._resource(form.get("resource"))
        return self.devices.start(self.issuer, self._issue("dc"), client.client_id, self._scopes(form.get("scope")), resource)

    def _client(self, request: Request, form: dict[str, str]) -> Client:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        basic = request.header("authorization") or ""
        if basic[:6].lower() == "basic ":
            try:
                client_id, _, secret = base64.b64decode(basic[6:]).decode("utf-8").partition(":")
            except ValueError:
                raise OAuthError("invalid_client", "malformed Basic credentials", 401) from None
        client = self.clients.get(client_id or "")
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client.secret is not None and not secrets.compare_digest(client.secret, secret or ""):
            raise OAuthError("invalid_client", "wrong or missing client secret", 401)
        return client

    def _tokens(self, grant: Grant, how: str) -> dict[str, Any]:
        lifetime = self.settings.token_seconds or DEFAULT_LIFETIME
        access, refresh = self._issue("at"), self._issue("rt")
        self.access[access] = Grant(grant.client_id, grant.scopes, grant.resource, time.time() + lifetime)
        self.refresh[refresh] = Grant(grant.client_id, grant.scopes, grant.resource)
        calls = f", good for {self.settings.token_calls} tool calls" if self.settings.token_calls else ""
        log(f"oauth: access token issued by {how} for {' '.join(grant.scopes)}, expires in {lifetime} s{calls}")
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "refresh_token": refresh,
            "scope": " ".join(grant.scopes),
        }

    def _issue(self, kind: str) -> str:
        value = f"demo-{kind}-{secrets.token_urlsafe(24)}"
        if self.settings.issued_log:
            with open(self.settings.issued_log, "a", encoding="utf-8") as log_file:
                log_file.write(value + "\n")
        return value
