"""DPoP (RFC 9449) on the client's side, without a server: the proofs (checked with joserfc as
a server would, from the public key in their own header), the nonces servers hand out, the key
kept with the token it binds (saved and loaded with it, and a bound token without its key
never loaded), the credential headers a bound token gets, a `use_dpop_nonce` 401 sent again
without a new authorization, and the key kept out of reprs and traces.

The flow against real authorization and resource servers that demand DPoP (and nonces) is
tests/conformance/test_conformance_auth.py's: no FastMCP, SDK or authlib server verifies DPoP.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import anyio
import httpx2
import pytest
from joserfc import jws
from joserfc.jwk import JWKRegistry
from joserfc.jws import JWSRegistry

from mcp_notebook import AuthorizationError, OAuth, UsageError
from mcp_notebook.auth.challenge import bearer_challenge
from mcp_notebook.auth.discovery import Discovered
from mcp_notebook.auth.dpop import DpopKey, algorithm_for
from mcp_notebook.auth.flow import OAuthFlow
from mcp_notebook.auth.grants import Token
from mcp_notebook.auth.identity import ClientIdentity
from mcp_notebook.auth.store import TokenStore

SERVER = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"


def verified(proof: str) -> tuple[dict[str, object], dict[str, object]]:
    """The header and claims of a proof whose signature checks out with the key in its header."""
    header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    key = JWKRegistry.import_key(header["jwk"])
    registry = JWSRegistry(algorithms=[header["alg"]])
    registry.max_header_length = 4096  # an RSA key's JWK is longer than joserfc's default bound
    token = jws.deserialize_compact(proof, key, registry=registry)
    return token.headers(), json.loads(token.payload)


def ath(access_token: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(access_token.encode()).digest()).rstrip(b"=").decode()


@pytest.mark.parametrize("algorithm", ["ES256", "RS256"])
def test_a_proof_is_signed_by_the_key_in_its_header_and_names_the_request(algorithm: str) -> None:
    key = DpopKey.generate(algorithm)
    header, claims = verified(key.proof("post", "https://mcp.example.com/mcp?session=1#x", access_token="at-1"))
    assert header["typ"] == "dpop+jwt" and header["alg"] == algorithm
    assert "d" not in header["jwk"] and "p" not in header["jwk"]  # the public key only
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"  # no query, no fragment
    assert claims["ath"] == ath("at-1") and isinstance(claims["iat"], int) and "nonce" not in claims
    _, again = verified(key.proof("POST", SERVER))
    assert again["jti"] != claims["jti"] and "ath" not in again  # fresh each time; no ath at a token endpoint


def test_the_algorithm_is_ours_among_those_the_server_lists() -> None:
    assert algorithm_for(["RS256", "ES256"]) == "ES256"
    assert algorithm_for(["PS256", "EdDSA", "RS256"]) == "RS256"
    assert algorithm_for(["PS256"]) is None and algorithm_for(None) is None and algorithm_for("ES256") is None


def test_a_servers_nonce_goes_into_later_proofs_to_that_origin_only() -> None:
    key = DpopKey.generate()
    assert key.take_nonce("https://auth.example.com/token", ["n-1"]) is True
    assert key.take_nonce("https://auth.example.com/other", ["n-1"]) is False  # the same nonce: nothing new
    assert key.take_nonce("https://auth.example.com/token", ["x" * 5000, "bad\nnonce"]) is False  # not kept
    assert verified(key.proof("POST", "https://auth.example.com/token"))[1]["nonce"] == "n-1"
    assert "nonce" not in verified(key.proof("POST", SERVER))[1]


def test_the_key_round_trips_through_its_secret_and_never_shows_in_a_repr() -> None:
    key = DpopKey.generate()
    again = DpopKey.from_secret(key.secret())
    assert again.thumbprint == key.thumbprint and again.algorithm == "ES256"
    private = key.private_parts()
    assert private and not any(part in repr(key) for part in private)
    token = Token("at-1", SERVER, ISSUER, "c", (), token_type="DPoP", dpop_key=key.secret())
    assert key.secret() not in repr(token) and "at-1" not in repr(token)
    assert token.header() == "DPoP at-1"
    with pytest.raises(AuthorizationError, match="cannot be read"):
        DpopKey.from_secret(json.dumps({"alg": "ES256", "jwk": key.public_jwk}))  # no private part


def saved_store(tmp_path: Path, token: Token) -> TokenStore:
    store = TokenStore(tmp_path)
    found = Discovered(SERVER, ISSUER, {"token_endpoint": f"{ISSUER}/token"}, None, legacy=False)
    store.save(SERVER, found, ClientIdentity("c", "none", "registered"), token)
    return store


def test_a_saved_bound_token_keeps_its_key(tmp_path: Path) -> None:
    key = DpopKey.generate()
    store = saved_store(tmp_path, Token("at-1", SERVER, ISSUER, "c", (), token_type="DPoP", dpop_key=key.secret()))
    loaded = store.load(SERVER, None)
    assert loaded is not None and loaded[2].bound
    assert loaded[2].dpop_key is not None and DpopKey.from_secret(loaded[2].dpop_key).thumbprint == key.thumbprint
    flow = OAuthFlow(SERVER, OAuth(), events=lambda *a, **k: None, secret=lambda s: None)
    flow.store = store
    flow._load(store)
    assert flow.token is not None and flow.dpop is not None and flow.dpop.thumbprint == key.thumbprint


def test_a_bound_token_whose_key_is_lost_is_not_loaded(tmp_path: Path) -> None:
    store = saved_store(tmp_path, Token("at-1", SERVER, ISSUER, "c", (), token_type="DPoP", dpop_key=None))
    assert store.load(SERVER, None) is None
    damaged = saved_store(tmp_path / "b", Token("at-1", SERVER, ISSUER, "c", (), token_type="DPoP", dpop_key="{}"))
    flow = OAuthFlow(SERVER, OAuth(remember=False), events=lambda *a, **k: None, secret=lambda s: None)
    flow._load(damaged)
    assert flow.token is None and flow.dpop is None


def bound_flow(secrets: list[str] | None = None) -> OAuthFlow:
    kept = secrets if secrets is not None else []
    flow = OAuthFlow(SERVER, OAuth(remember=False), events=lambda *a, **k: None, secret=kept.append)
    flow._use_key(DpopKey.generate())
    assert flow.dpop is not None
    flow.token = Token("at-1", SERVER, ISSUER, "c", (), token_type="DPoP", dpop_key=flow.dpop.secret())
    return flow


def test_a_bound_token_goes_with_the_dpop_scheme_and_a_proof_for_that_request() -> None:
    flow = bound_flow()
    headers = flow.credentials("GET", SERVER)
    assert headers["Authorization"] == "DPoP at-1"
    _, claims = verified(headers["DPoP"])
    assert claims["htm"] == "GET" and claims["htu"] == SERVER and claims["ath"] == ath("at-1")
    assert flow.credentials("POST", "https://other.example.com/mcp") == {}
    flow.token = Token("at-2", SERVER, ISSUER, "c", ())  # a Bearer token: no proof
    assert flow.credentials("POST", SERVER) == {"Authorization": "Bearer at-2"}


def test_the_key_is_registered_as_a_secret() -> None:
    secrets: list[str] = []
    flow = bound_flow(secrets)
    assert flow.dpop is not None
    assert flow.dpop.secret() in secrets and all(part in secrets for part in flow.dpop.private_parts())


def test_a_use_dpop_nonce_401_is_sent_again_with_the_nonce_and_no_new_authorization() -> None:
    flow = bound_flow()
    challenge = 'DPoP error="use_dpop_nonce", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"'
    response = httpx2.Response(
        401,
        headers={"WWW-Authenticate": challenge, "DPoP-Nonce": "rs-nonce"},
        request=httpx2.Request("POST", SERVER),
    )
    assert bearer_challenge([challenge]).scheme == "DPoP" and bearer_challenge([challenge]).resource_metadata
    assert anyio.run(flow.retry, response, 0) is True
    assert flow.authorizations == 0
    assert verified(flow.credentials("POST", SERVER)["DPoP"])[1]["nonce"] == "rs-nonce"


def test_the_jwt_bearer_grant_needs_its_assertion_and_hides_it() -> None:
    with pytest.raises(UsageError, match="needs its assertion"):
        OAuth(grant="jwt_bearer")
    options = OAuth(client_id="workload", assertion="eyJ.workload.jwt")
    assert "eyJ.workload.jwt" not in repr(options)
    flow = OAuthFlow(SERVER, options, events=lambda *a, **k: None, secret=lambda s: None)
    assert flow._grant(Discovered(SERVER, ISSUER, {}, None, legacy=False)) == "jwt_bearer"
