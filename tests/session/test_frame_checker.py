"""Frame checking stays off the ping path: the rules run on the checker's own thread, each
frame once and whole (never the trace's clipped copy), and the thread ends with the session."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

import mcp_notebook
from mcp_notebook.protocol.frame_rules import FrameRules, Seen, Violation

BIG = 10 * 1024 * 1024


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Seen]]:
    """Every (thread name, frame) the rules are run on."""
    seen: list[tuple[str, Seen]] = []
    check = FrameRules.check

    def recording(self: FrameRules, frame: Seen) -> list[Violation]:
        seen.append((threading.current_thread().name, frame))
        return check(self, frame)

    monkeypatch.setattr(FrameRules, "check", recording)
    return seen


def test_the_rules_run_on_the_checker_thread_never_where_pongs_are_written(checked: list[tuple[str, Seen]]) -> None:
    with mcp_notebook.demo("checked", load_magics=False, ping_interval=0.05) as conn:
        pongs = conn.health.pongs_sent
        while conn.health.pongs_sent < pongs + 3:  # server pings answered (on the stdio reading thread)
            conn.call_tool("echo", {"text": "hi"})
        assert conn.violations == []
    assert {name for name, _ in checked} == {"mcp-frame-checker"}
    assert any(frame.method == "ping" for _, frame in checked)
    assert not [t for t in threading.enumerate() if t.name == "mcp-frame-checker"]  # ended with the session


def test_a_10_mb_result_is_checked_once_and_whole(checked: list[tuple[str, Seen]]) -> None:
    with mcp_notebook.demo("big", load_magics=False) as conn:
        result = conn.request("tools/call", {"name": "echo", "arguments": {"text": "x" * BIG}})
        assert len(result["content"][0]["text"]) == BIG
        assert conn.violations == []
        entry = conn.trace.frames("in")[-1]
    big = [frame for _, frame in checked if frame.seq == entry.seq]
    assert len(big) == 1
    assert len(big[0].message["result"]["content"][0]["text"]) == BIG  # not the trace's clipped copy
    assert len(entry.raw) < BIG


def test_stopping_checks_what_is_queued_and_readers_see_it_all() -> None:
    from mcp_notebook.session.trace import Trace
    from mcp_notebook.session.violations import FrameChecker

    trace = Trace()
    checker = FrameChecker(trace)
    for seq in range(1, 201):
        checker.submit(Seen(seq, "invalid", None, "2025-11-25", problem="invalid JSON"))
    checker.stop()
    assert checker.settled(timeout=0)  # nothing left unchecked: no wait at all
    assert checker.count == 200 and [v.index for v in checker.violations()] == list(range(1, 201))
    assert trace.marks[200] == ("not-json-rpc",)
    assert checker.submit(Seen(201, "invalid", None, "2025-11-25")) == [] and checker.count == 200  # ended


def test_a_session_that_breaks_no_rule_never_imports_jsonschema():
    # Importing jsonschema takes over a second in calls that hold the GIL, so a server ping
    # waiting on the reading thread waited up to 100 ms (bench/kernel_pongs.py). Valid frames,
    # tool schemas and structured content are decided by fastjsonschema's compiled code alone.
    code = (
        "import sys, mcp_notebook\n"
        "from mcp_notebook import demo_server\n"
        "c = mcp_notebook.connect(demo_server.command('stdio'), name='p', era='legacy')\n"
        "c.list_tools(); assert c.call_tool('add', a=1, b=2).structured == {'sum': 3}\n"
        "assert c.violations == [] and 'fastjsonschema' in sys.modules\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema'))\n"
        "c.close()\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
