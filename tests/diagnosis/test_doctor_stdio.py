"""The connection doctor over stdio: each failing step from a real cause, and `ok` on real servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import descendants
from support.servers import server_everything_cmd

import mcp_notebook

pytestmark = [pytest.mark.node]

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]
STEPS = ["command", "process", "stdout", "era probe", "handshake", "version and era", "ping", "listings"]


def banner_server(banner: str) -> list[str]:
    """The demo server behind a line printed on stdout first, as many servers do by mistake."""
    code = f"print({banner!r}, flush=True); import runpy; runpy.run_module('mcp_notebook.demo_server', run_name='__main__')"
    return [sys.executable, "-c", code]


def statuses(diagnosis: mcp_notebook.Diagnosis) -> dict[str, str]:
    return {step.name: step.status for step in diagnosis.steps}


def failed_at(diagnosis: mcp_notebook.Diagnosis, name: str) -> mcp_notebook.Diagnosis:
    """Assert the diagnosis stopped at `name`: it failed, every earlier step passed, every later one was skipped."""
    assert not diagnosis.ok
    names = [step.name for step in diagnosis.steps]
    assert names == STEPS
    at = names.index(name)
    assert all(step.status == "ok" or step.name == "era probe" for step in diagnosis.steps[:at]), diagnosis.text()
    assert diagnosis.steps[at].status == "fail" and diagnosis.failed is diagnosis.steps[at]
    assert all(step.status == "skipped" for step in diagnosis.steps[at + 1 :])
    return diagnosis


def test_a_missing_command_fails_at_the_command():
    diagnosis = failed_at(mcp_notebook.doctor("no-such-mcp-server-here --stdio", live=False), "command")
    step = diagnosis.step("command")
    assert "not found on PATH" in step.detail and "PATH" in step.hint


def test_a_file_that_is_not_executable_fails_at_the_command(tmp_path):
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\nexec python -m mcp_notebook.demo_server\n")
    script.chmod(0o644)
    step = failed_at(mcp_notebook.doctor(str(script), live=False), "command").step("command")
    assert "not executable" in step.detail and "chmod +x" in step.hint


def test_a_script_that_is_not_there_fails_at_the_command(tmp_path):
    step = failed_at(mcp_notebook.doctor([sys.executable, str(tmp_path / "missing.py")], live=False), "command").step("command")
    assert "missing.py does not exist" in step.detail


def test_a_server_that_exits_at_once_fails_at_the_process():
    code = "import sys; print('config file not found: ~/.srv.toml', file=sys.stderr); sys.exit(3)"
    step = failed_at(mcp_notebook.doctor([sys.executable, "-c", code], live=False), "process").step("process")
    assert "exited at once (status 3)" in step.detail
    assert "config file not found" in step.detail  # its stderr says why


def test_a_banner_on_stdout_is_named_and_the_process_is_reaped():
    diagnosis = failed_at(mcp_notebook.doctor(banner_server("Server starting on stdio..."), live=False), "stdout")
    step = diagnosis.step("stdout")
    assert "'Server starting on stdio...'" in step.detail and "before its answer" in step.detail
    assert "stderr" in step.hint
    assert statuses(diagnosis)["process"] == "ok"
    assert not descendants()  # the server it started (which kept running) is gone


def test_a_server_that_never_answers_fails_at_stdout():
    code = "import sys, time; sys.stdin.read()"  # reads stdin, never writes
    step = failed_at(mcp_notebook.doctor([sys.executable, "-c", code], live=False, timeout=1), "stdout").step("stdout")
    assert "nothing came on stdout within 1 s" in step.detail
    assert not descendants()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_demo_server_is_ok_in_both_eras(era):
    diagnosis = mcp_notebook.doctor([*DEMO, "--era", era], live=False)
    assert diagnosis.ok, diagnosis.text()
    assert statuses(diagnosis) == dict.fromkeys(STEPS, "ok")
    assert f"{era} era" in diagnosis.step("version and era").detail
    assert "tools" in diagnosis.step("listings").detail
    assert not mcp_notebook.connections()  # the doctor's connection is closed, and forgotten


def test_server_everything_over_stdio_is_ok():
    diagnosis = mcp_notebook.doctor(server_everything_cmd("stdio"), live=False, timeout=30)
    assert diagnosis.ok, diagnosis.text()
    assert statuses(diagnosis) == dict.fromkeys(STEPS, "ok")
    assert "2025-11-25" in diagnosis.step("version and era").detail


def test_secrets_in_the_environment_never_reach_a_step():
    secret = "sk-live-0123456789abcdef"
    code = "import os; print('key=' + os.environ['SERVICE_API_KEY'], flush=True)"
    diagnosis = mcp_notebook.doctor([sys.executable, "-c", code], env={"SERVICE_API_KEY": secret}, live=False, timeout=2)
    shown = diagnosis.text() + diagnosis.html() + json.dumps([vars(step) for step in diagnosis.steps])
    assert secret not in shown
    assert "key=[redacted]" in diagnosis.step("process").detail  # it printed that, then exited


def test_server_text_is_escaped_in_html_and_stripped_of_escapes_in_text():
    diagnosis = mcp_notebook.doctor(banner_server("\x1b[31m<script>alert(1)</script>\x1b[0m"), live=False)
    html, text = diagnosis._repr_mimebundle_()["text/html"], repr(diagnosis)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "\x1b" not in text and "<script>alert(1)</script>" in text


def test_the_checklist_prints_a_line_per_step_as_it_goes(capsys):
    code = "import sys; sys.exit(3)"
    diagnosis = mcp_notebook.doctor([sys.executable, "-c", code])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("doctor ") and lines[0].endswith("(stdio)")
    assert lines[1].startswith("  ✔ command: ok") and lines[2].startswith("  ✘ process: fail")
    assert lines[3] == "  · not run: stdout, era probe, handshake, version and era, ping, listings"
    assert lines[4] == diagnosis.summary() and lines[4].endswith("failed at process")


def test_a_configured_server_is_diagnosed_by_its_name(config_home, monkeypatch):
    home, workspace = config_home
    cursor = home / ".cursor"
    cursor.mkdir(parents=True, exist_ok=True)
    entry = {"command": sys.executable, "args": ["-m", "mcp_notebook.demo_server"]}
    (cursor / "mcp.json").write_text(json.dumps({"mcpServers": {"demo-config": entry}}))
    diagnosis = mcp_notebook.doctor("demo-config", consent=True, live=False)
    assert diagnosis.ok, diagnosis.text()
    assert diagnosis.target.endswith("-m mcp_notebook.demo_server")


def test_the_command_line_doctor_exits_0_when_ok_and_1_when_not():
    ok = subprocess.run(
        [*sys.argv[:0], sys.executable, "-m", "mcp_notebook", "doctor", "--", *DEMO], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "✔ handshake: ok" in ok.stdout
    broken = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "doctor", "--", "no-such-mcp-server-here"], capture_output=True, text=True
    )
    assert broken.returncode == 1
    assert "✘ command: fail" in broken.stdout


def test_the_command_line_help_lists_its_doctor_and_compare_commands():
    done = subprocess.run([sys.executable, "-m", "mcp_notebook", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "python -m mcp_notebook doctor TARGET" in done.stdout and "python -m mcp_notebook compare CASSETTE" in done.stdout


def test_diagnosis_is_public_and_lists_steps_by_name():
    diagnosis = mcp_notebook.doctor(str(Path("/nonexistent/server")), live=False)
    assert isinstance(diagnosis, mcp_notebook.Diagnosis)
    assert diagnosis.step("command").status == "fail"
    with pytest.raises(KeyError):
        diagnosis.step("no such step")


def test_a_server_that_ignores_sigterm_and_never_answers_is_still_reaped():
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    step = failed_at(mcp_notebook.doctor([sys.executable, "-c", code], live=False, timeout=1), "stdout").step("stdout")
    assert "nothing came on stdout within 1 s" in step.detail
    assert not descendants()  # killed after stdin closing and SIGTERM did nothing


def test_a_pinned_era_the_server_does_not_speak_says_to_probe():
    diagnosis = mcp_notebook.doctor([*DEMO, "--era", "modern"], era="legacy", live=False)
    step = failed_at(diagnosis, "handshake").step("handshake")
    assert "2026-07-28" in step.detail and "era='auto'" in step.hint
    assert "an error: this server speaks 2026-07-28" in diagnosis.step("stdout").detail


def test_an_option_connect_does_not_take_is_a_usage_error():
    with pytest.raises(mcp_notebook.UsageError, match="not these: colour"):
        mcp_notebook.doctor("python server.py", colour="red")
