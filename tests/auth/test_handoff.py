"""The hand-off's files: private to the user, single use, bound to the flow's state, and
never answered for a flow that ended (here without a server: `deliver` is what the
extension's handler calls; tests/server_extension runs it in a real Jupyter server)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from mcp_notebook.auth import handoff
from mcp_notebook.auth.handoff import Pending, deliver, handoff_directory

REDIRECT = "https://hub.example/user/a/mcp-notebook/oauth/callback"


def test_a_response_reaches_its_flow_once_and_no_other(tmp_path: Path) -> None:
    with Pending("state-a", REDIRECT, tmp_path) as a, Pending("state-b", REDIRECT, tmp_path) as b:
        assert deliver("state-a", "code=1&state=state-a", tmp_path)
        assert not deliver("state-a", "code=2&state=state-a", tmp_path)  # taken by the first
        assert not deliver("state-c", "code=3&state=state-c", tmp_path)  # nobody waits with that state
        assert a.wait(30) == f"{REDIRECT}?code=1&state=state-a"
        assert b.received is None and not b.arrived.is_set()
        assert list((tmp_path / handoff.SUBDIRECTORY).glob("*.response")) == []


def test_a_flow_whose_kernel_died_is_not_answered(tmp_path: Path) -> None:
    directory = handoff_directory(tmp_path)
    assert directory is not None
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pending = directory / f"{handoff.key('state-x')}.pending"
    pending.write_text(json.dumps({"pid": int(dead.stdout), "expires": 2**40}))
    assert not deliver("state-x", "code=1&state=state-x", tmp_path)
    assert not pending.exists() and not list(directory.glob("*.response"))


def test_the_directory_is_made_private_and_a_link_is_refused(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    (loose / handoff.SUBDIRECTORY).mkdir(parents=True, mode=0o755)
    os.chmod(loose / handoff.SUBDIRECTORY, 0o755)
    made = handoff_directory(loose)
    assert made is not None and stat.S_IMODE(made.stat().st_mode) == 0o700
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / handoff.SUBDIRECTORY).symlink_to(made)
    assert handoff_directory(linked) is None
    assert not deliver("state-a", "code=1", linked)
