"""The doctor's era probe step: what the server answered to `server/discover`, what the client
concluded, and whether `era="legacy"` connects where the default does not (real peers, and the
scripted raw server where a real one cannot misbehave on demand)."""

from __future__ import annotations

import sys

from support.servers import SERVERS_DIR, sdk_server_cmd

import mcp_notebook

RAW = [sys.executable, str(SERVERS_DIR / "raw_server.py")]
DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]


def test_a_modern_server_s_probe_is_named_with_its_versions():
    diagnosis = mcp_notebook.doctor(sdk_server_cmd(), live=False, timeout=30, probe_timeout=30)  # however slow it starts
    assert diagnosis.ok, diagnosis.text()
    step = diagnosis.step("era probe")
    assert step.status == "ok"
    assert step.detail == (
        "server/discover: a DiscoverResult (versions 2026-07-28); concluded: modern 2026-07-28 (probe: server/discover answered)"
    )


def test_a_legacy_server_s_refusal_is_named_and_the_fallback_concluded():
    diagnosis = mcp_notebook.doctor([*DEMO, "--era", "legacy"], live=False)
    step = diagnosis.step("era probe")
    assert step.status == "ok" and step.detail.startswith("server/discover: JSON-RPC error -32601"), step.detail
    assert "concluded: legacy (server/discover refused:" in step.detail
    assert "the handshake follows on a clean slate" in step.detail


def test_a_server_that_exits_when_probed_fails_the_step_and_era_legacy_is_tried_and_named():
    diagnosis = mcp_notebook.doctor([*RAW, "--exit-on-unknown"], live=False)
    step = diagnosis.step("era probe")
    assert step.status == "fail" and step.detail.startswith("server/discover: no answer; no verdict:"), step.detail
    assert "unknown method server/discover" in step.detail
    assert step.hint == "connect with era='legacy': a trial with it connected (raw-test-server)", step.hint
    assert diagnosis.step("handshake").status == "skipped"
    assert not mcp_notebook.connections()  # the trial is closed


def test_a_probe_left_unanswered_warns_that_era_legacy_skips_its_wait():
    diagnosis = mcp_notebook.doctor([*RAW, "--mute-before-initialize"], live=False, probe_timeout=0.5)
    assert diagnosis.step("handshake").status == "ok", diagnosis.text()
    step = diagnosis.step("era probe")
    assert step.status == "warn" and "no answer to server/discover within 0.5 s" in step.detail
    assert "era='legacy' skips the probe" in step.hint


def test_a_pinned_era_sends_no_probe_and_says_so():
    diagnosis = mcp_notebook.doctor([*DEMO, "--era", "legacy"], era="legacy", live=False)
    assert diagnosis.ok, diagnosis.text()
    step = diagnosis.step("era probe")
    assert step.status == "skipped" and step.detail == "not sent: legacy (pinned): no probe"
