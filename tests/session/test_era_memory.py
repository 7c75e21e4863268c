"""Era verdicts remembered per server across kernels (a file in the user data directory), so the
probe happens once; `era=` still decides; a verdict that turns out wrong is probed afresh in the
same connect and remembered anew, never stranding the connection."""

from __future__ import annotations

import json
import subprocess
import sys

from support.servers import REPO

import mcp_notebook
from mcp_notebook.api.connecting import era_memory
from mcp_notebook.base import private

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]
LEGACY_ONLY = [*DEMO, "--era", "legacy"]
MODERN_ONLY = [*DEMO, "--era", "modern"]
REMEMBERED = "cache: an earlier probe of the same server"


def sent(conn: mcp_notebook.Connection, method: str) -> int:
    return sum(1 for e in conn.trace.frames("out") if e.method == method)


def test_a_verdict_found_in_one_kernel_spares_the_next_kernel_the_probe():
    connect_elsewhere = f"import mcp_notebook; mcp_notebook.connect({LEGACY_ONLY!r}, name='other').close()"
    subprocess.run([sys.executable, "-c", connect_elsewhere], cwd=REPO, check=True, timeout=120)  # another kernel
    with mcp_notebook.connect(LEGACY_ONLY, name="here") as conn:
        assert conn.era == "legacy" and conn.health.era_source == REMEMBERED
        assert sent(conn, "server/discover") == 0 and sent(conn, "initialize") == 1
        notes = [e.note for e in conn.trace.entries() if e.kind == "era"]
        assert notes == [f"legacy ({REMEMBERED}): no probe"]


def test_the_era_option_still_decides():
    era_memory.remember(LEGACY_ONLY, "legacy")
    with mcp_notebook.connect(LEGACY_ONLY, name="pinned", era="legacy") as conn:
        assert conn.health.era_source == "pinned"
    both = [*DEMO, "--era", "both"]
    era_memory.remember(both, "legacy")
    with mcp_notebook.connect(both, name="modern", era="modern") as conn:
        assert conn.era == "modern" and sent(conn, "initialize") == 0


def test_a_server_remembered_modern_that_is_now_legacy_only_falls_back_and_is_remembered_anew():
    era_memory.remember(LEGACY_ONLY, "modern")
    with mcp_notebook.connect(LEGACY_ONLY, name="changed") as conn:
        assert conn.era == "legacy" and conn.health.era_source.startswith("probe: server/discover refused")
        assert sent(conn, "server/discover") == 1 and sent(conn, "initialize") == 1  # one session: no second start
    assert era_memory.recall(LEGACY_ONLY) == "legacy"


def test_a_server_remembered_legacy_that_is_now_modern_only_is_probed_afresh_and_remembered_anew():
    era_memory.remember(MODERN_ONLY, "legacy")
    with mcp_notebook.connect(MODERN_ONLY, name="changed") as conn:
        assert conn.era == "modern" and conn.health.era_source == "probe: server/discover answered"
    assert era_memory.recall(MODERN_ONLY) == "modern"


def test_the_file_names_no_server_and_holds_no_secret():
    target = "https://user:hunter2-password@mcp.example.com/mcp?api_key=s3cret-value-123"
    era_memory.remember(target, "legacy")
    era_memory.remember([*DEMO, "--token", "s3cret-token-456"], "modern")
    text = (private.data_dir() / era_memory.FILE).read_text()
    for word in ("example", "hunter2", "s3cret", "demo_server", "python"):
        assert word not in text
    assert all(len(key) == 64 and set(entry) == {"era", "at"} for key, entry in json.loads(text).items())
    assert era_memory.recall("https://mcp.example.com/mcp") == "legacy"  # the same server without its credentials


def test_loopback_http_servers_are_not_remembered():
    """Their ports are handed out afresh: the next server on one is likely another."""
    for url in ("http://127.0.0.1:8123/mcp", "http://localhost:8123/mcp", "http://[::1]:8123/mcp"):
        era_memory.remember(url, "legacy")
        assert era_memory.server_key(url) is None and era_memory.recall(url) is None


def test_the_file_keeps_the_newest_verdicts_only(monkeypatch):
    monkeypatch.setattr(era_memory, "MAX_SERVERS", 3)
    for number in range(5):
        era_memory.remember(["server", str(number)], "legacy")
    assert [era_memory.recall(["server", str(number)]) for number in range(5)] == [None, None, "legacy", "legacy", "legacy"]
