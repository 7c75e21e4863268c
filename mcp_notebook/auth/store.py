"""Tokens that outlast the kernel: one JSON file per (server, authorization server, client)
in the user data directory's `oauth/`, readable by the user alone (`base.private`: 0600 from
birth, in a 0700 directory of the user's; a file another user owns is not read). A file holds
what a later kernel needs to use the token, or to refresh it without asking again: the
client's identity, the authorization server's metadata, the token. Where the system keyring
keeps secrets (`vault`), the secrets (access and refresh tokens, a DPoP-bound token's key,
client secret, private key) go there, one entry per file, and the file keeps the rest; else
the file holds them too. A DPoP-bound token whose key is not there is not loaded: without
its key it is of no use. Forgetting a server deletes both.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..base import private
from .challenge import canonical_resource
from .discovery import Discovered
from .grants import Token
from .identity import ClientIdentity
from .vault import Vault

SUBDIRECTORY = "oauth"
SECRETS = {"token": ("access_token", "refresh_token", "dpop_key"), "client": ("secret", "private_key")}


def store_directory() -> Path:
    return private.data_dir() / SUBDIRECTORY


class TokenStore:
    """Reads and writes the token files of one directory."""

    def __init__(self, directory: Path | None = None, vault: Vault | None = None) -> None:
        self.directory = directory or store_directory()
        self.vault = vault or Vault()

    @property
    def where(self) -> str:
        """Where secrets are kept: the system keyring (its backend), or files."""
        return self.vault.name

    def save(self, server_url: str, found: Discovered, client: ClientIdentity, token: Token) -> Path:
        server = canonical_resource(server_url)
        name = hashlib.sha256(f"{server}\n{found.issuer}\n{client.client_id}".encode()).hexdigest()[:32]
        path = self.directory / f"{name}.json"
        parts: dict[str, dict[str, Any]] = {"found": asdict(found), "client": asdict(client), "token": asdict(token)}
        secrets = {f"{part}.{key}": parts[part].pop(key) for part, keys in SECRETS.items() for key in keys}
        in_keyring = self.vault.put(path.stem, secrets)
        if not in_keyring:
            for name, value in secrets.items():
                part, key = name.split(".")
                parts[part][key] = value
        record = {"server": server, "saved": time.time(), **parts, "keyring": in_keyring}
        private.write_private(path, json.dumps(record))
        return path

    def records(self, server_url: str | None = None) -> list[tuple[Path, dict[str, Any]]]:
        """The files (of one server, or all), newest first; unreadable ones are skipped."""
        server = canonical_resource(server_url) if server_url else None
        found = []
        for path in self.directory.glob("*.json") if private.owned_directory(self.directory) else ():
            text = private.read_private(path)
            try:
                record = json.loads(text) if text is not None else None
            except ValueError:
                continue
            if isinstance(record, dict) and (server is None or record.get("server") == server):
                found.append((path, record))
        return sorted(found, key=lambda item: -float(item[1].get("saved") or 0))

    def load(self, server_url: str, client_id: str | None) -> tuple[Discovered, ClientIdentity, Token] | None:
        """The newest saved token for `server_url` (of `client_id`, when one is given)."""
        for path, record in self.records(server_url):
            if record.get("keyring") is True:
                secrets = self.vault.get(path.stem)
                if secrets is None:
                    continue  # its secrets are in a keyring not here now, or gone from it
                for name, value in secrets.items():
                    part, _, key = name.partition(".")
                    if isinstance(record.get(part), dict) and key in SECRETS.get(part, ()):
                        record[part][key] = value
            try:
                found = Discovered(**{**record["found"], "scopes_supported": _tuple(record["found"]["scopes_supported"])})
                client = ClientIdentity(**record["client"])
                token = Token(**{**record["token"], "scopes": tuple(record["token"]["scopes"])})
            except (KeyError, TypeError):
                continue
            if token.bound and token.dpop_key is None:
                continue  # its key is lost: the token cannot be presented
            if client_id is None or client.client_id == client_id:
                return found, client, token
        return None

    def forget(self, server_url: str) -> int:
        """Delete every file of `server_url`, and its keyring entry; how many there were."""
        gone = 0
        for path, record in self.records(server_url):
            if record.get("keyring") is True:
                self.vault.delete(path.stem)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                gone += 1
        return gone


def _tuple(value: Any) -> tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else None
