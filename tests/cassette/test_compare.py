"""compare(): a cassette asked again of a live server. The same server: no difference; a
server whose tool description and one result changed: exactly those two. From Python, the
`%mcp compare` magic and the CI command line (exit status, JUnit XML)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from support.recordings import record_everything
from support.servers import free_port, sdk_server_cmd, server_everything_cmd, stop, wait_for_port
from support.shells import magics_shell

import mcp_notebook
from mcp_notebook import demo_server

pytestmark = [pytest.mark.node]

CHANGED_DESCRIPTION = "Echoes <b>loudly</b>\x1b[2J"  # markup and a screen clear: escaped, stripped
CHANGED = ("--echo-description", CHANGED_DESCRIPTION, "--greeting", "bonjour")


@pytest.fixture(scope="module")
def sdk_cassette(tmp_path_factory) -> Path:
    """A session with the SDK server: listings, two tool calls, an error, a resource read."""
    path = tmp_path_factory.mktemp("cassettes") / "sdk.jsonl"
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="recorded") as conn:
        conn.request("tools/list")
        conn.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        conn.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        conn.request("resources/list")
        conn.request("resources/read", {"uri": "greeting://hello"})
        with pytest.raises(mcp_notebook.McpError):
            conn.request("prompts/get", {"name": "no-such-prompt"})
        conn.trace.to_jsonl(path)
    return path


def test_server_everything_against_its_own_cassette_shows_no_difference(tmp_path):
    path, _ = record_everything(tmp_path)
    comparison = mcp_notebook.compare(path, server_everything_cmd())
    assert comparison.ok and comparison.differences == [], str(comparison)
    labels = [check.label for check in comparison.checks]
    assert labels[0] == "initialize" and "tools/call trigger-sampling-request" in labels and "prompts/get args-prompt" in labels
    assert len(comparison.checks) == 9  # the handshake and the eight requests
    assert "no difference" in str(comparison) and repr(comparison).startswith("<Comparison ok")


def test_a_stdio_cassette_compares_against_the_same_server_over_http(tmp_path):
    path, _ = record_everything(tmp_path)
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    server = subprocess.Popen(
        server_everything_cmd("streamableHttp"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, timeout=60.0)
        comparison = mcp_notebook.compare(path, f"http://127.0.0.1:{port}/mcp")
    finally:
        stop(server)
    assert comparison.ok, str(comparison)
    assert len(comparison.checks) == 9


def test_a_changed_description_and_a_changed_result_are_exactly_the_two_differences(sdk_cassette):
    assert mcp_notebook.compare(sdk_cassette, sdk_server_cmd()).ok
    comparison = mcp_notebook.compare(sdk_cassette, sdk_server_cmd(*CHANGED))
    assert not comparison.ok
    found = [(d.method, d.where, d.recorded, d.live) for d in comparison.differences]
    assert found == [
        ("tools/list", "/result/tools/0/description", "Return the text unchanged.", CHANGED_DESCRIPTION),
        ("resources/read", "/result/contents/0/text", "hello", "bonjour"),
    ]
    text, html = str(comparison), comparison._repr_html_()
    assert "2 differences" in text and "\x1b" not in text and '"hello"' in text and '"bonjour"' in text
    assert "&lt;b&gt;loudly&lt;/b&gt;" in html and "<b>loudly" not in html


def test_volatile_fields_are_configurable(sdk_cassette):
    changed = sdk_server_cmd(*CHANGED)
    assert [d.method for d in mcp_notebook.compare(sdk_cassette, changed, also_ignore=["description"]).differences] == [
        "resources/read"
    ]
    only_text = mcp_notebook.compare(sdk_cassette, changed, also_ignore=["/result/contents/*/text"])
    assert [d.where for d in only_text.differences] == ["/result/tools/0/description"]
    assert "progressToken" in mcp_notebook.compare(sdk_cassette, sdk_server_cmd()).ignored


def test_a_modern_cassette_compares_against_the_demo_server(tmp_path):
    path = tmp_path / "modern.jsonl"
    with mcp_notebook.connect(demo_server.command("stdio", "modern"), era="modern", name="recorded") as conn:
        conn.request("tools/list")
        conn.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        conn.trace.to_jsonl(path)
    comparison = mcp_notebook.compare(path, demo_server.command("stdio", "modern"))
    assert comparison.ok, str(comparison)
    assert [check.method for check in comparison.checks] == ["server/discover", "tools/list", "tools/call"]
    legacy = mcp_notebook.compare(path, demo_server.command("stdio", "legacy"))
    [refused] = legacy.differences  # a legacy-only server has no server/discover: the handshake differs, nothing else runs
    assert refused.method == "server/discover" and refused.where == ""
    assert "result" in refused.recorded and "Method not found" in str(refused.live["error"])


def test_the_command_line_exit_status_and_junit_summary(sdk_cassette, tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcp_notebook", "compare", *args], capture_output=True, text=True, timeout=120
        )

    same = run(str(sdk_cassette), "--junit", str(tmp_path / "same.xml"), "--", *sdk_server_cmd())
    assert same.returncode == 0, same.stderr
    assert "no difference" in same.stdout
    changed = run(str(sdk_cassette), "--junit", str(tmp_path / "changed.xml"), "--", *sdk_server_cmd(*CHANGED))
    assert changed.returncode == 1, changed.stderr
    assert "/result/tools/0/description" in changed.stdout and "\x1b" not in changed.stdout
    suite = ElementTree.parse(tmp_path / "changed.xml").getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "7" and suite.get("failures") == "2"
    failed = [case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failed == ["002 tools/list", "006 resources/read greeting://hello"]
    assert ElementTree.parse(tmp_path / "same.xml").getroot().get("failures") == "0"
    broken = run(str(tmp_path / "missing.jsonl"), "--", *sdk_server_cmd())
    assert broken.returncode == 2 and "cannot read the cassette" in broken.stderr


def test_the_compare_magic(sdk_cassette, tmp_path, capsys):
    with magics_shell() as shell:
        command = " ".join(f"'{word}'" for word in sdk_server_cmd("--greeting", "bonjour"))
        shell.run_line_magic("mcp", f"compare {sdk_cassette} --junit {tmp_path / 'j.xml'} -- {command}")
        out = capsys.readouterr().out
        assert "1 difference" in out and "/result/contents/0/text" in out
        assert (tmp_path / "j.xml").read_text().count("<failure") == 1
        with pytest.raises(Exception, match="as a URL or as a command after --"):
            shell.run_line_magic("mcp", f"compare {sdk_cassette}")


def test_secrets_stay_redacted_in_a_comparison(tmp_path):
    secret = "sk-compare-0123456789"
    path = tmp_path / "secret.jsonl"
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="recorded", secrets=[secret]) as conn:
        conn.request("tools/call", {"name": "echo", "arguments": {"text": f"key {secret}"}})
        conn.trace.to_jsonl(path)
    # The recorded request went out redacted; asked again with the secret registered, the live
    # answer is redacted the same way, and nothing shown holds the secret.
    comparison = mcp_notebook.compare(path, sdk_server_cmd("--greeting", secret), secrets=[secret])
    assert comparison.ok, str(comparison)
    for shown in (str(comparison), comparison._repr_html_(), comparison.to_junit()):
        assert secret not in shown


def test_tab_offers_files_for_the_cassette(sdk_cassette):
    from mcp_notebook.notebook.completion.candidates import candidates
    from mcp_notebook.notebook.magics import compare as magic_compare  # noqa: F401 - registers %mcp compare

    folder = str(sdk_cassette.parent) + "/"
    assert str(sdk_cassette) in candidates(["compare"], folder)
    assert "--junit" in candidates(["compare", str(sdk_cassette)], "--j")
