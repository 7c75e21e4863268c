"""DPoP (RFC 9449, SEP-1932): tokens bound to a key the client holds, proven on every request.

A `DpopKey` is one key pair, made with joserfc for a connection's flow when the authorization
server lists a DPoP algorithm we sign with (ES256 first), or when the user asks for DPoP. Each
request carries a fresh proof: a JWT of type `dpop+jwt` signed by the key, with its public JWK
in the header and `jti`, `htm`, `htu` (the URL without query or fragment) and `iat` as claims,
plus `ath` (the access token's hash) at the resource server. A server that wants a nonce
answers `use_dpop_nonce` with a `DPoP-Nonce` header; the nonce is kept per origin and put in
every later proof there.

The rule: the key is a credential, like the token it binds. Its repr shows its algorithm and
thumbprint only; its private JWK (`secret()`) is registered as a secret and kept only with
the token (a saved token keeps its key among its secrets, a token whose key is lost is never
used). Proofs go only into the `DPoP` header, never into a trace, an error or a log.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..base.errors import AuthorizationError
from .challenge import origin_of

ALGORITHMS = ("ES256", "RS256")  # those we sign with, in our order of preference (joserfc warns on EdDSA: RFC 9864)
NONCE_LIMIT = 1024  # a server's nonce longer than this is not kept (it goes into every proof)
NONCE_ERROR = "use_dpop_nonce"


def algorithm_for(listed: object) -> str | None:
    """Our first algorithm among those an authorization server lists (`dpop_signing_alg_values_supported`)."""
    if not isinstance(listed, list):
        return None
    return next((alg for alg in ALGORITHMS if alg in listed), None)


class DpopKey:
    """One DPoP key pair and the nonces servers gave for it."""

    def __init__(self, key: Any, algorithm: str) -> None:
        self._key = key
        self.algorithm = algorithm
        self.public_jwk: dict[str, Any] = key.as_dict(private=False)
        self.thumbprint: str = key.thumbprint()
        self._nonces: dict[tuple[str, str, int | None], str] = {}

    @classmethod
    def generate(cls, algorithm: str = "ES256") -> DpopKey:
        from joserfc.jwk import ECKey, RSAKey  # here: it loads `cryptography`, which only DPoP and JWTs need

        if algorithm == "ES256":
            return cls(ECKey.generate_key("P-256"), algorithm)
        if algorithm == "RS256":
            return cls(RSAKey.generate_key(2048), algorithm)
        raise AuthorizationError(f"DPoP with {algorithm} is not supported; use one of {', '.join(ALGORITHMS)}")

    @classmethod
    def from_secret(cls, text: str) -> DpopKey:
        """The key `secret()` wrote (a saved token's)."""
        from joserfc.jwk import JWKRegistry

        try:
            data = json.loads(text)
            key = JWKRegistry.import_key(data["jwk"])
            algorithm = data["alg"]
        except Exception:  # noqa: BLE001 - any damage: the key is lost, and its token with it
            raise AuthorizationError("the saved DPoP key cannot be read") from None
        if algorithm not in ALGORITHMS or not key.is_private:
            raise AuthorizationError("the saved DPoP key cannot be read")
        return cls(key, algorithm)

    def secret(self) -> str:
        """The private key as text, to keep with the token it binds (a credential)."""
        return json.dumps({"alg": self.algorithm, "jwk": self._key.as_dict(private=True)})

    def private_parts(self) -> list[str]:
        """The private key's values, for the redactor."""
        jwk = self._key.as_dict(private=True)
        return [str(value) for name, value in jwk.items() if name not in self.public_jwk]

    def __repr__(self) -> str:
        return f"DpopKey({self.algorithm}, thumbprint={self.thumbprint})"

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request (`access_token`: the token it presents, at a resource server)."""
        from joserfc import jws

        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii", errors="replace")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        nonce = self._nonces.get(origin_of(url))
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        payload = json.dumps(claims, separators=(",", ":")).encode()
        return jws.serialize_compact(header, payload, self._key, algorithms=[self.algorithm])

    def take_nonce(self, url: str, nonces: Iterable[str]) -> bool:
        """Keep the nonce a server at `url` gave (its `DPoP-Nonce` headers); True if it is a new one."""
        for nonce in nonces:
            nonce = nonce.strip()
            if not nonce or len(nonce) > NONCE_LIMIT or not nonce.isascii() or not nonce.isprintable():
                continue
            origin = origin_of(url)
            if self._nonces.get(origin) == nonce:
                return False
            self._nonces[origin] = nonce
            return True
        return False
