"""Saved tokens' secrets in the system keyring where it keeps secrets, the 0600 files otherwise;
logging out clears both.

The keyring is real: `keyrings.alt`'s file backend, which works headless, chosen the way a
user chooses one (`PYTHON_KEYRING_BACKEND`, or keyring's own `keyringrc.cfg`) in a private HOME
(`config_home`). Left to keyring's own choice, that file backend is not taken: a plaintext
file is no better than ours. conftest's default, keyring's `fail` backend, is no keyring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import keyring.core
import pytest
from keyring.backends import fail, null
from keyrings.alt.file import PlaintextKeyring

import mcp_notebook
from mcp_notebook import OAuth, demo_server
from mcp_notebook.api.connecting.authorization import logout
from mcp_notebook.api.display import frontend
from mcp_notebook.auth.device import DeviceCode
from mcp_notebook.auth.discovery import Discovered
from mcp_notebook.auth.grants import Token
from mcp_notebook.auth.identity import ClientIdentity
from mcp_notebook.auth.store import TokenStore
from mcp_notebook.auth.vault import SERVICE, Vault, _keeps_secrets
from mcp_notebook.demo_server import OAuthSettings

PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"


def saved(store: TokenStore) -> Path:
    found = Discovered("https://mcp.example/mcp", "https://as.example", {"token_endpoint": "x"}, None, legacy=False)
    client = ClientIdentity("client-1", "client_secret_post", "registered", secret="cs-secret-1234")
    token = Token("at-secret-1234", found.resource, found.issuer, "client-1", ("a",), None, "rt-secret-1234")
    return store.save("https://mcp.example/mcp", found, client, token)


def test_secrets_go_to_the_keyring_and_logout_clears_both(
    config_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", PLAINTEXT)
    store = TokenStore()
    assert store.where == "the system keyring (PlaintextKeyring)"
    path = saved(store)
    on_disk = path.read_text()
    assert not [s for s in ("at-secret-1234", "rt-secret-1234", "cs-secret-1234") if s in on_disk]
    assert json.loads(on_disk)["keyring"] is True
    entry = json.loads(PlaintextKeyring().get_password(SERVICE, path.stem) or "{}")
    assert entry["token.access_token"] == "at-secret-1234" and entry["client.secret"] == "cs-secret-1234"

    loaded = TokenStore().load("https://mcp.example/mcp", None)
    assert loaded is not None
    _, client, token = loaded
    assert (token.access_token, token.refresh_token, client.secret) == ("at-secret-1234", "rt-secret-1234", "cs-secret-1234")

    assert TokenStore().forget("https://mcp.example/mcp") == 1
    assert not path.exists() and PlaintextKeyring().get_password(SERVICE, path.stem) is None


def test_without_a_keyring_the_file_keeps_the_secrets(private_data_dir: Path) -> None:
    store = TokenStore()  # conftest's fail backend
    assert store.where == "files"
    path = saved(store)
    assert "at-secret-1234" in path.read_text() and json.loads(path.read_text())["keyring"] is False
    assert TokenStore().load("https://mcp.example/mcp", None) is not None


def test_a_keyring_entry_gone_means_no_saved_token(config_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", PLAINTEXT)
    path = saved(TokenStore())
    PlaintextKeyring().delete_password(SERVICE, path.stem)
    assert TokenStore().load("https://mcp.example/mcp", None) is None


def test_which_backends_keep_secrets() -> None:
    assert not _keeps_secrets(fail.Keyring(), chosen=True)
    assert not _keeps_secrets(null.Keyring(), chosen=True)
    assert not _keeps_secrets(PlaintextKeyring(), chosen=False)  # keyring's own pick of a plaintext file
    assert _keeps_secrets(PlaintextKeyring(), chosen=True)  # the user's pick


class Approver(frontend.FrontEnd):
    def __init__(self) -> None:
        self.codes: list[DeviceCode] = []

    def show_device_code(self, code: DeviceCode, progress: Any = None) -> Any:
        self.codes.append(code)
        return frontend.ShownCode()


def test_a_later_connection_uses_the_token_from_the_keyring_until_logout(
    config_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """keyring's own configuration file picks the backend, as a user would set it up."""
    home, _ = config_home
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    config = home / ".config" / "python_keyring" / "keyringrc.cfg"
    config.parent.mkdir(parents=True)
    config.write_text(f"[backend]\ndefault-keyring={PLAINTEXT}\n")
    assert Vault().available
    issued = tmp_path / "issued.txt"
    previous, user = frontend.current(), Approver()
    frontend.use(user)
    process, url = demo_server.start_http(oauth=OAuthSettings(device_interval=0, issued_log=str(issued)))
    try:
        with process:
            with mcp_notebook.connect(url, name="first", auth=OAuth(grant="device")) as conn:
                conn.call_tool("add", {"a": 1, "b": 2})
                assert any("the system keyring (PlaintextKeyring)" in (e.note or "") for e in conn.trace.entries())
            files = list((home / ".local/share/mcp-notebook/oauth").glob("*.json"))
            assert len(files) == 1 and not [s for s in issued.read_text().split() if s in files[0].read_text()]
            with mcp_notebook.connect(url, name="later", auth=OAuth(grant="device")) as conn:
                conn.call_tool("add", {"a": 1, "b": 2})
                assert len(user.codes) == 1  # nobody was shown a code again: the saved token served
                assert logout(conn) == 1
            assert not files[0].exists() and keyring.core.load_config().get_password(SERVICE, files[0].stem) is None  # type: ignore[union-attr] is None
    finally:
        frontend.use(previous)
