"""The OAuth client's rules that need no server: reading challenges, canonical resources and
where metadata is looked for, the checks on an authorization response, the client's signed
assertion, tokens kept to their origin, and secrets kept out of reprs."""

from __future__ import annotations

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_notebook import AuthorizationError, CrossAppAccess, OAuth, UsageError
from mcp_notebook.auth.challenge import bearer_challenge, canonical_resource, covers
from mcp_notebook.auth.discovery import Discovered, metadata_urls
from mcp_notebook.auth.flow import OAuthFlow
from mcp_notebook.auth.grants import Token, authorization_code, authorization_request
from mcp_notebook.auth.identity import ClientIdentity, authenticate

ISSUER = "https://auth.example.com"


def found(**metadata: object) -> Discovered:
    base = {"issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "code_challenge_methods_supported": ["S256"]}
    return Discovered("https://mcp.example.com/mcp", ISSUER, {**base, **metadata}, None, legacy=False)


PUBLIC = ClientIdentity("client-1", "none", "registered")


def test_the_bearer_challenge_is_read_among_other_schemes_with_quoted_values():
    header = (
        'Basic realm="x", Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="https://m/x?y=\\"z\\"", DPoP algs="ES256"'
    )
    challenge = bearer_challenge([header])
    assert challenge.error == "insufficient_scope"
    assert challenge.scopes == ("a", "b")
    assert challenge.resource_metadata == 'https://m/x?y="z"'
    assert bearer_challenge(['Basic realm="x"']).params == {}
    assert bearer_challenge(["Bearer"]).params == {}


def test_canonical_resources_and_what_metadata_may_speak_for():
    assert canonical_resource("HTTPS://MCP.Example.com/MCP#frag") == "https://mcp.example.com/MCP"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert covers("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert not covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp2")
    assert not covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp")


def test_metadata_is_looked_for_in_the_specs_order():
    assert metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://auth.example.com/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_a_server_without_pkce_s256_is_refused():
    with pytest.raises(AuthorizationError, match="PKCE"):
        authorization_request(found(code_challenge_methods_supported=["plain"]), PUBLIC, "http://127.0.0.1:1/cb", None)


def test_the_authorization_response_is_checked_before_its_code_is_used():
    request = authorization_request(found(), PUBLIC, "http://127.0.0.1:1/cb", ("a",))
    state = request.state
    assert "resource=https%3A%2F%2Fmcp.example.com%2Fmcp" in request.url and "code_challenge_method=S256" in request.url
    assert authorization_code(request, f"http://127.0.0.1:1/cb?code=c0de&state={state}", found()) == "c0de"
    assert authorization_code(request, f"http://127.0.0.1:1/cb?code=c0de&state={state}&iss={ISSUER}", found()) == "c0de"
    with pytest.raises(AuthorizationError, match="state does not match"):
        authorization_code(request, "http://127.0.0.1:1/cb?code=c0de&state=other", found())
    with pytest.raises(AuthorizationError, match="not https://auth.example.com: ignored"):
        authorization_code(request, f"http://127.0.0.1:1/cb?code=c&state={state}&iss={ISSUER}/", found())  # no normalizing
    with pytest.raises(AuthorizationError, match="lacks the iss parameter"):
        authorization_code(
            request, f"http://127.0.0.1:1/cb?code=c&state={state}", found(authorization_response_iss_parameter_supported=True)
        )
    with pytest.raises(AuthorizationError, match="authorization refused: access_denied"):
        authorization_code(request, f"http://127.0.0.1:1/cb?error=access_denied&state={state}", found())


def test_the_client_assertion_is_a_jwt_signed_with_the_clients_key():
    key = ECKey.generate_key("P-256")
    client = ClientIdentity("cc-client", "private_key_jwt", "pre-registered", private_key=key.as_pem(private=True).decode())
    form: dict[str, str] = {}
    assert authenticate(client, form, ISSUER) == {}
    claims = jwt.decode(form["client_assertion"], key).claims
    assert claims["iss"] == claims["sub"] == "cc-client" and claims["aud"] == ISSUER and claims["exp"] > claims["iat"]
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def test_basic_authentication_form_encodes_the_credentials():
    form: dict[str, str] = {}
    headers = authenticate(ClientIdentity("a:b", "client_secret_basic", "given", secret="s p"), form, ISSUER)
    assert headers == {"Authorization": "Basic YSUzQWI6cyUyMHA="}  # base64("a%3Ab:s%20p")
    assert "client_secret" not in form


def test_the_token_goes_only_to_the_servers_origin():
    flow = OAuthFlow("https://mcp.example.com/mcp", OAuth(remember=False), events=lambda *a, **k: None, secret=lambda s: None)
    assert flow.credentials("POST", "https://mcp.example.com/mcp") == {}
    flow.token = Token("t0ken", "https://mcp.example.com/mcp", ISSUER, "c", ())
    assert flow.credentials("POST", "https://mcp.example.com/messages?session=1") == {"Authorization": "Bearer t0ken"}
    assert flow.credentials("POST", "https://other.example.com/mcp") == {}
    assert flow.credentials("POST", "http://mcp.example.com/mcp") == {}
    assert flow.credentials("POST", "https://mcp.example.com:8443/mcp") == {}


def test_secrets_never_show_in_a_repr():
    options = OAuth(client_id="c", client_secret="s3cret", private_key="-----PEM-----", authorize=lambda url: url)
    access = CrossAppAccess("id.t0ken", "https://idp/token", idp_client_secret="idp-s3cret")
    token = Token("acc3ss", "https://r", ISSUER, "c", ("a",), refresh_token="r3fresh")
    shown = (
        repr(options) + repr(access) + repr(token) + repr(ClientIdentity("c", "client_secret_basic", "given", secret="s3cret"))
    )
    for secret in ("s3cret", "-----PEM-----", "id.t0ken", "idp-s3cret", "acc3ss", "r3fresh"):
        assert secret not in shown


def test_oauth_options_that_cannot_work_are_one_line_usage_errors():
    with pytest.raises(UsageError, match="https://"):
        OAuth(client_metadata_url="http://example.com/client.json")
    with pytest.raises(UsageError, match="needs its client_id"):
        OAuth(client_secret="s3cret")
    with pytest.raises(UsageError, match="unknown grant"):
        OAuth(grant="implicit")
    assert OAuth(scopes="a b").scopes == ("a", "b")  # type: ignore[arg-type]
