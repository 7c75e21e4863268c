"""The system keyring (the `keyring` package) as the place for saved OAuth secrets.

Used only with a backend that keeps secrets: macOS Keychain, Windows Credential Locker,
the Secret Service (GNOME Keyring, KWallet) and the like. Not keyring's `fail` or `null`
backends (no keyring at all), and not `keyrings.alt`'s file backends unless the user chose
one (`PYTHON_KEYRING_BACKEND` or keyring's `keyringrc.cfg`): a plaintext file is no better
than our 0600 files. The rule: `keyring` is imported only when tokens are saved or loaded,
and any keyring failure means "no keyring here" (the files, `store`), never a failed
connection. One entry per token file: service `mcp-notebook`, user name the file's name,
the password a JSON object of the secrets.
"""

from __future__ import annotations

import json
from typing import Any

SERVICE = "mcp-notebook"
NO_KEYRING = ("keyring.backends.fail", "keyring.backends.null")
NOT_BY_DEFAULT = ("keyrings.alt",)  # file backends: taken only when chosen by the user


class Vault:
    """The keyring backend that is in use, or none (`available` False); found when first asked
    for (importing keyring and finding its backend takes 0.1-0.3 s), so a connection with no
    saved token never pays for it."""

    def __init__(self) -> None:
        self._backend: Any = None
        self._found = False

    @property
    def backend(self) -> Any:
        if not self._found:
            self._backend, self._found = _backend(), True
        return self._backend

    @property
    def available(self) -> bool:
        return self.backend is not None

    @property
    def name(self) -> str:
        backend = self.backend
        return f"the system keyring ({type(backend).__name__})" if backend is not None else "files"

    def put(self, entry: str, secrets: dict[str, str | None]) -> bool:
        if self.backend is None:
            return False
        try:
            self.backend.set_password(SERVICE, entry, json.dumps(secrets))
        except Exception:  # noqa: BLE001 - a keyring that refuses (locked, no session bus): the files then
            return False
        return True

    def get(self, entry: str) -> dict[str, Any] | None:
        if self.backend is None:
            return None
        try:
            text = self.backend.get_password(SERVICE, entry)
            value = json.loads(text) if text else None
        except Exception:  # noqa: BLE001 - unreadable: as if not there
            return None
        return value if isinstance(value, dict) else None

    def delete(self, entry: str) -> bool:
        if self.backend is None:
            return False
        try:
            self.backend.delete_password(SERVICE, entry)
        except Exception:  # noqa: BLE001 - not there (PasswordDeleteError), or the keyring refuses
            return False
        return True


def _backend() -> Any:
    try:
        import keyring.core
    except ImportError:
        return None
    try:
        chosen = keyring.core.load_env() or keyring.core.load_config()
        backend = chosen or keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keyring configuration is no keyring
        return None
    return backend if _keeps_secrets(backend, chosen=chosen is not None) else None


def _keeps_secrets(backend: Any, *, chosen: bool) -> bool:
    module = type(backend).__module__
    if module.startswith(NO_KEYRING):
        return False
    if module == "keyring.backends.chainer":
        return any(_keeps_secrets(each, chosen=chosen) for each in getattr(backend, "backends", ()))
    return chosen or not module.startswith(NOT_BY_DEFAULT)
