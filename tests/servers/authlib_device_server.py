"""An authorization server with the device grant (RFC 8628) built on Authlib's, not ours: its
DeviceAuthorizationEndpoint and DeviceCodeGrant behind a small threaded `http.server` on
loopback. Neither FastMCP 4.1.6 nor the MCP SDK has a device-grant authorization server, and
Authlib (installed with them) is a widely used implementation of the RFC, so the grant's wire
format is checked against someone else's reading of it.

The user is scripted: `decisions` maps each poll of a user code (1, 2, ...) to what the user
has done by then: nothing yet (None), approved (True) or denied (False); `slow` makes the
first poll answer `slow_down`. Authlib has no RFC 8707: `resource` is received and ignored.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict

CLIENT_ID = "authlib-device-client"


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str = CLIENT_ID

    def get_client_id(self) -> str:
        return self.client_id

    def get_allowed_scope(self, scope: str) -> str:
        return scope

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in (DeviceCodeGrant.GRANT_TYPE, "refresh_token")


@dataclass
class State:
    """What the server keeps, and the scripted user."""

    origin: str = ""
    decisions: dict[int, bool | None] = field(default_factory=lambda: {1: None})
    slow: bool = False
    credentials: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    tokens: list[dict[str, Any]] = field(default_factory=list)
    forms: list[dict[str, str]] = field(default_factory=list)  # every form received, for the test to read


class Request(OAuth2Request):  # type: ignore[misc]
    def __init__(self, uri: str, headers: dict[str, str], form: dict[str, str]) -> None:
        super().__init__("POST", uri, headers=headers)
        self._form = form
        self.payload = BasicOAuth2Payload(form)

    @property
    def form(self) -> dict[str, str]:
        return self._form

    @property
    def args(self) -> dict[str, str]:
        return {}


def build(state: State) -> AuthorizationServer:
    class Server(AuthorizationServer):  # type: ignore[misc]
        def query_client(self, client_id: str) -> Client | None:
            return Client() if client_id == CLIENT_ID else None

        def save_token(self, token: dict[str, Any], request: Any) -> None:
            state.tokens.append(token)

        def create_oauth2_request(self, request: Any) -> Any:
            return request

        def handle_response(self, status: int, body: Any, headers: Any) -> tuple[int, Any, Any]:
            return status, body, headers

        def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
            return None

    class Endpoint(DeviceAuthorizationEndpoint):  # type: ignore[misc]
        CLIENT_AUTH_METHODS = ["none"]
        INTERVAL = 0

        def get_verification_uri(self) -> str:
            return f"{state.origin}/activate"

        def save_device_credential(self, client_id: str, scope: str, data: dict[str, Any]) -> None:
            state.credentials[data["device_code"]] = {
                "client_id": client_id, "scope": scope, **data, "expires_at": time.time() + data["expires_in"]
            }  # fmt: skip

    class Grant(DeviceCodeGrant):  # type: ignore[misc]
        def query_device_credential(self, device_code: str) -> Any:
            found = state.credentials.get(device_code)
            return DeviceCredentialDict(found) if found else None

        def query_user_grant(self, user_code: str) -> tuple[str, bool] | None:
            state.polls[user_code] += 1
            poll = state.polls[user_code]
            decision = state.decisions.get(poll, state.decisions[max(state.decisions)])
            return None if decision is None else ("user-1", decision)

        def should_slow_down(self, credential: Any) -> bool:
            return state.slow and state.polls[credential.get_user_code()] == 1

    server = Server(scopes_supported=["read"])
    server.register_token_generator("default", BearerTokenGenerator(lambda *a, **k: secrets.token_urlsafe(24)))
    server.register_grant(Grant)
    server.register_endpoint(Endpoint)
    return server


class AuthlibDeviceServer:
    """The server on a free loopback port, in a thread of this process (joined on close)."""

    def __init__(self, state: State) -> None:
        self.state = state
        oauth = build(state)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the http.server protocol names it
                length = int(self.headers.get("content-length") or 0)
                form = dict(parse_qsl(self.rfile.read(length).decode()))
                state.forms.append(form)
                request = Request(state.origin + self.path, dict(self.headers), form)
                if self.path == "/device_authorization":
                    status, body, _ = oauth.create_endpoint_response("device_authorization", request)
                elif self.path == "/token":
                    status, body, _ = oauth.create_token_response(request)
                else:
                    status, body = 404, {"error": "not_found"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = False  # server_close() joins the request threads
        state.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="authlib-device-server", daemon=True)
        self._thread.start()

    def metadata(self) -> dict[str, Any]:
        origin = self.state.origin
        return {
            "issuer": origin,
            "token_endpoint": f"{origin}/token",
            "device_authorization_endpoint": f"{origin}/device_authorization",
            "grant_types_supported": [DeviceCodeGrant.GRANT_TYPE],
            "token_endpoint_auth_methods_supported": ["none"],
        }

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> AuthlibDeviceServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
