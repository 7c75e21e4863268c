"""The watchdog is per user: on its client's death it signals only groups with a running
member of its own user. A group id that names another user's processes (an id reused after
our server went) is left alone. The other user is real: the tests run as root and start a
process as `nobody`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mcp_notebook.transports import watchdog

NOBODY = 65534
pytestmark = [
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc"),
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="starting a process as another user needs root"),
]


def test_only_groups_of_our_own_user_are_reaped() -> None:
    ours = subprocess.Popen(["sleep", "600"], start_new_session=True)
    theirs = subprocess.Popen(["sleep", "600"], start_new_session=True, user=NOBODY)
    try:
        assert watchdog.alive(theirs.pid)  # root could signal it: only the owner check spares it
        assert watchdog.running({ours.pid, theirs.pid}) == {ours.pid}
        watchdog.reap({ours.pid, theirs.pid}, exit_grace=0.0, term_grace=10.0, kill_wait=10.0)
        assert ours.wait(timeout=10) == -15  # SIGTERM
        assert theirs.poll() is None
    finally:
        for proc in (ours, theirs):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
