"""`OAuth` and `CrossAppAccess`: how a user asks to be authorized, as plain values.

Secrets (client secret, private key, ID token, assertion) never show in a repr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..base.errors import UsageError
from ..base.public import public

DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"
GRANTS = ("auto", "authorization_code", "client_credentials", "device", "jwt_bearer")


@public
@dataclass(frozen=True)
class CrossAppAccess:
    """Enterprise-managed authorization (SEP-990): an identity provider's ID token is exchanged
    there for an identity assertion grant (RFC 8693), which the MCP server's authorization
    server takes for an access token (RFC 7523 JWT bearer grant)."""

    id_token: str = field(repr=False)
    idp_token_endpoint: str
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)


@public
@dataclass(frozen=True)
class OAuth:
    """How to authorize with an HTTP server's authorization server.

    `client_id` (and `client_secret`) for a client registered beforehand; else
    `client_metadata_url` (a Client ID Metadata Document, used when the server supports
    them), else dynamic registration. `scopes` replaces the scopes the server asks for.
    `authorize` receives the authorization URL and returns the URL the browser was sent back
    to (`redirect_uri` with the code); without it the front end asks the user. A
    `private_key` (PEM) authenticates the client with a signed JWT (`private_key_jwt`) in
    the client credentials grant; `grant` picks the grant ("auto": client credentials when
    there is a key or the server offers no other, the device grant (RFC 8628: a code to enter
    at a URL on any device, no redirect) when the server offers it and not the authorization
    code, else the authorization code; "device" asks for the device grant). An `assertion`
    (a JWT, or a function that returns a fresh one: a workload's identity token, such as a
    Kubernetes service account token) is exchanged for a token with the JWT bearer grant
    (RFC 7523, workload identity federation), with `client_id` when the authorization server
    knows the workload by one; a refused assertion is not retried. `dpop` binds tokens to a
    key this client holds (DPoP, RFC 9449): None uses it when the authorization server offers
    it, True always, False never. With
    `remember`, tokens are kept in the user data directory for later kernels. In a kernel
    of a Jupyter server with the mcp-notebook extension, the browser is sent back to that
    server's callback unless `redirect_uri` or `authorize` is given; `public_url` is the
    server's origin as the browser reaches it, when the server cannot tell.
    """

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None
    scopes: Sequence[str] | None = None
    redirect_uri: str = DEFAULT_REDIRECT_URI
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    grant: str = "auto"
    cross_app: CrossAppAccess | None = None
    assertion: str | Callable[[], str] | None = field(default=None, repr=False)
    dpop: bool | None = None
    authorize: Callable[[str], str] | None = field(default=None, repr=False)
    client_name: str = "mcp-notebook"
    remember: bool = True
    public_url: str | None = None

    def __post_init__(self) -> None:
        if self.grant not in GRANTS:
            raise UsageError(f"unknown grant {self.grant!r}; use one of: {', '.join(GRANTS)}")
        if isinstance(self.scopes, str):
            object.__setattr__(self, "scopes", tuple(self.scopes.split()))
        if self.client_metadata_url is not None and not self.client_metadata_url.startswith("https://"):
            raise UsageError("client_metadata_url must be an https:// URL with a path (the Client ID Metadata Document)")
        if self.client_secret is not None and self.client_id is None:
            raise UsageError("a client_secret needs its client_id")
        if self.grant == "jwt_bearer" and self.assertion is None:
            raise UsageError("the jwt_bearer grant needs its assertion: OAuth(assertion=JWT, or a function returning one)")
        if self.private_key is not None and self.client_id is None:
            raise UsageError("a private_key needs its client_id (the JWT's issuer and subject)")
