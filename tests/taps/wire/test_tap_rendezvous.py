"""The tap's rendezvous: a private per-user directory (refused if it is not), valid short names,
socket paths under the AF_UNIX limit, and the recordings of a name listed oldest first."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.tap_relay import short_tap_dir

from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.rendezvous import TapDirError


@pytest.fixture
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with short_tap_dir() as folder:
        monkeypatch.setenv(rendezvous.ENV_DIR, str(folder))
        yield folder


def test_the_directory_is_made_private(tap_dir: Path) -> None:
    assert rendezvous.runtime_dir() == tap_dir
    assert tap_dir.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o750, 0o701, 0o777])
def test_a_directory_others_can_enter_is_refused_in_one_line(tap_dir: Path, mode: int) -> None:
    tap_dir.mkdir()
    tap_dir.chmod(mode)
    with pytest.raises(TapDirError, match="group or others have access") as caught:
        rendezvous.runtime_dir()
    assert "\n" not in str(caught.value)


def test_a_symlinked_directory_is_refused(tap_dir: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    tap_dir.symlink_to(real)
    with pytest.raises(TapDirError, match="not a plain directory"):
        rendezvous.runtime_dir()


def test_a_directory_of_another_user_is_refused(tap_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tap_dir.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(tap_dir).st_uid + 1)
    with pytest.raises(TapDirError, match="belongs to uid"):
        rendezvous.check_private(tap_dir)


def test_without_an_xdg_runtime_dir_a_per_uid_folder_in_the_temp_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(rendezvous.ENV_DIR, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert rendezvous.where() == Path(tempfile.gettempdir()) / f"mcp-notebook-{os.getuid()}"


def test_with_an_xdg_runtime_dir_it_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(rendezvous.ENV_DIR, raising=False)
    with tempfile.TemporaryDirectory(prefix="run") as xdg:  # short: a socket path in it must fit
        monkeypatch.setenv("XDG_RUNTIME_DIR", xdg)
        assert rendezvous.runtime_dir() == Path(xdg) / "mcp-notebook"


def test_a_runtime_dir_too_deep_for_a_socket_gives_way_to_the_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(rendezvous.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / ("d" * 80)))
    assert rendezvous.where() == Path(tempfile.gettempdir()) / f"mcp-notebook-{os.getuid()}"


@pytest.mark.parametrize("name", ["", ".hidden", "-x", "a/b", "a b", "x" * 41, "é"])
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a tap name"):
        rendezvous.check_name(name)


def test_a_command_names_its_tap() -> None:
    assert rendezvous.name_for("/usr/bin/npx") == "npx"
    assert rendezvous.name_for("server.exe") == "server"
    assert rendezvous.name_for("my server!") == "my-server-"
    assert rendezvous.name_for("...") == "server"


def test_socket_paths_stay_under_the_unix_limit(tap_dir: Path) -> None:
    path = rendezvous.socket_path("x" * rendezvous.MAX_NAME)
    assert path.parent == tap_dir and path.name.endswith(".sock")
    assert len(str(path).encode()) <= rendezvous.MAX_SOCKET_PATH


def test_a_directory_too_deep_for_a_socket_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rendezvous.ENV_DIR, str(tmp_path / ("d" * 100)))
    with pytest.raises(TapDirError, match="too long for a Unix socket"):
        rendezvous.socket_path("name")


def test_recordings_are_listed_oldest_first(tap_dir: Path) -> None:
    parent = rendezvous.recordings_dir("srv", create=True)
    for stamp in ("0002", "0001", "0003"):
        (parent / stamp).mkdir()
    assert [p.name for p in rendezvous.recordings("srv")] == ["0001", "0002", "0003"]
    assert rendezvous.recordings("other") == []
    assert parent.stat().st_mode & 0o777 == 0o700
