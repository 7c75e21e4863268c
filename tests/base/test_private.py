"""The user's files on a shared machine: tokens, consent records and tool pins are born 0600 in
0700 directories, an open directory is closed, and a directory or file another user owns is
refused or ignored. Another user is real here: the tests run as root, so they chown to
`nobody` and run a reader as `nobody` (`subprocess`'s `user=`).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_notebook.auth.discovery import Discovered
from mcp_notebook.auth.grants import Token
from mcp_notebook.auth.identity import ClientIdentity
from mcp_notebook.auth.store import TokenStore
from mcp_notebook.base import private
from mcp_notebook.configs import pins, store

NOBODY = 65534
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory every user may enter (pytest's own are 0700, which would hide our modes)."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-shared-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def saved_token(directory: Path) -> Path:
    found = Discovered("https://mcp.example/mcp", "https://as.example", {"token_endpoint": "x"}, None, legacy=False)
    client = ClientIdentity("client-1", "client_secret_post", "registered", secret="cs-secret-1234")
    token = Token("at-secret-1234", found.resource, found.issuer, "client-1", ("a",), None, "rt-secret-1234")
    return TokenStore(directory).save("https://mcp.example/mcp", found, client, token)


def test_files_are_born_0600_in_0700_directories_whatever_the_umask(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    replace = os.replace

    def watching(source: str, target: Path) -> None:
        seen.append(mode(Path(source)))  # the temporary file, before it takes the file's name
        replace(source, target)

    monkeypatch.setattr(private.os, "replace", watching)
    old = os.umask(0)
    try:
        target = shared_tmp / "a" / "b" / "file.json"
        private.write_private(target, "{}")
    finally:
        os.umask(old)
    assert seen == [0o600]
    assert mode(target) == 0o600
    assert mode(shared_tmp / "a") == 0o700 and mode(shared_tmp / "a" / "b") == 0o700
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]  # no temporary left behind


def test_tokens_consent_and_pins_are_private(private_data_dir: Path) -> None:
    path = saved_token(private_data_dir / "oauth")
    store.update("consent.json", lambda data: data.update(entry={"digest": "d"}))
    pins.pin("url:https://x.example/mcp", [{"name": "echo", "description": "Echo"}])
    for name in (path, private_data_dir / "consent.json", private_data_dir / "tool-pins.json"):
        assert mode(name) == 0o600, name
    assert mode(private_data_dir / "oauth") == 0o700 and mode(private_data_dir) == 0o700


def test_a_directory_open_to_others_is_closed_and_an_open_file_too(private_data_dir: Path) -> None:
    private_data_dir.chmod(0o777)
    pins.pin("k", [{"name": "echo"}])
    assert mode(private_data_dir) == 0o700
    (private_data_dir / "tool-pins.json").chmod(0o644)
    assert pins.pinned("k") is not None
    assert mode(private_data_dir / "tool-pins.json") == 0o600


@needs_root
def test_a_directory_another_user_owns_is_refused(private_data_dir: Path) -> None:
    pins.pin("k", [{"name": "echo"}])
    store.update("consent.json", lambda data: data.update(entry={"digest": "d"}))
    os.chown(private_data_dir, NOBODY, NOBODY)
    assert pins.pinned("k") is None and store.load("consent.json") == {}  # nothing of theirs is trusted
    with pytest.raises(private.UnsafeLocation, match="belongs to another user"):
        pins.pin("k", [{"name": "echo"}])
    with pytest.raises(private.UnsafeLocation):
        saved_token(private_data_dir / "oauth")
    assert TokenStore(private_data_dir / "oauth").records() == []


@needs_root
def test_a_file_another_user_planted_is_ignored(private_data_dir: Path) -> None:
    """A consent or a pin written by someone else is no decision of this user's."""
    store.update("consent.json", lambda data: data.update(entry={"digest": "d"}))
    token = saved_token(private_data_dir / "oauth")
    assert store.load("consent.json") and TokenStore(private_data_dir / "oauth").records()
    os.chown(private_data_dir / "consent.json", NOBODY, NOBODY)
    os.chown(token, NOBODY, NOBODY)
    assert store.load("consent.json") == {}
    assert TokenStore(private_data_dir / "oauth").records() == []


@needs_root
def test_another_user_cannot_read_the_tokens(shared_tmp: Path) -> None:
    path = saved_token(shared_tmp / "data" / "oauth")
    assert "at-secret-1234" in path.read_text()
    control = shared_tmp / "public.txt"  # shows the reader would see a file it may read
    control.write_text("readable")
    control.chmod(0o644)
    for command, expected in (["cat", control], "readable"), (["cat", path], None), (["ls", path.parent], None):
        out = subprocess.run(command, user=NOBODY, capture_output=True, text=True)
        if expected is None:
            assert out.returncode != 0 and "Permission denied" in out.stderr, command
        else:
            assert out.stdout == expected, command
    assert json.loads(path.read_text())["server"] == "https://mcp.example/mcp"
