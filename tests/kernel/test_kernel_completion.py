"""Tab completion in a real kernel: jupyter_client `complete_request`s on `%mcp` lines and in
`conn.call_tool("`, against server-everything. Every answer for a `%mcp` line is ours alone:
no Python builtin, keyword or other magic is mixed in."""

from __future__ import annotations

import builtins
import keyword

import pytest
from support.kernels import Kernel
from support.servers import server_everything_cmd

from mcp_notebook.notebook.magics import mcp as magics  # noqa: F401 - registers every subcommand
from mcp_notebook.notebook.magics.commands import SUBCOMMANDS

pytestmark = [pytest.mark.node, pytest.mark.kernel]

PYTHON_NAMES = set(dir(builtins)) | set(keyword.kwlist)


def complete(kernel: Kernel, code: str) -> list[str]:
    """The kernel's matches for the cursor at the end of `code` (each as the text from cursor_start)."""
    msg_id = kernel.kc.complete(code, len(code))
    while True:
        reply = kernel.kc.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    assert content["status"] == "ok" and content["cursor_end"] == len(code), content
    start = content["cursor_start"]
    return [code[:start] + match for match in content["matches"]]


CASES = [
    ("%mcp con", ["%mcp connect"]),
    ("%mcp call get-s", ["%mcp call get-structured-content", "%mcp call get-sum"]),
    ("r = %mcp call get-s", ["r = %mcp call get-structured-content", "r = %mcp call get-sum"]),
    ("%mcp call --conn ev get-s", ["%mcp call --conn ev get-structured-content", "%mcp call --conn ev get-sum"]),
    (
        "%mcp call -c ev --timeout 5 get-s",
        ["%mcp call -c ev --timeout 5 get-structured-content", "%mcp call -c ev --timeout 5 get-sum"],
    ),
    ("%mcp call get-sum ", ["%mcp call get-sum a=", "%mcp call get-sum b="]),
    ("%mcp call get-sum a=1 ", ["%mcp call get-sum a=1 b="]),
    ("%mcp call get-sum --ti", ["%mcp call get-sum --timeout"]),
    ("%mcp call get-structured-content location=C", ["%mcp call get-structured-content location=Chicago"]),
    ("%mcp call get-structured-content location=New", ["%mcp call get-structured-content location='New York'"]),
    (
        "%mcp call get-annotated-message includeImage=",
        ["%mcp call get-annotated-message includeImage=false", "%mcp call get-annotated-message includeImage=true"],
    ),
    ("%mcp prompt comp", ["%mcp prompt completable-prompt"]),
    ("%mcp prompt completable-prompt ", ["%mcp prompt completable-prompt department=", "%mcp prompt completable-prompt name="]),
    ("%mcp prompt completable-prompt department=E", ["%mcp prompt completable-prompt department=Engineering"]),
    (
        "%mcp prompt completable-prompt department=Sales name=",
        [
            "%mcp prompt completable-prompt department=Sales name=David",
            "%mcp prompt completable-prompt department=Sales name=Eve",
            "%mcp prompt completable-prompt department=Sales name=Frank",
        ],
    ),
    ("%mcp read demo://resource/static/document/a", ["%mcp read demo://resource/static/document/architecture.md"]),
    ("%mcp read 'Dynamic T", ["%mcp read 'Dynamic Text Resource'"]),
    ("%mcp read 'Dynamic Text Resource' ", ["%mcp read 'Dynamic Text Resource' resourceId="]),
    ("%mcp loglevel w", ["%mcp loglevel warning"]),
    ("%mcp connect x --era m", ["%mcp connect x --era modern"]),
    ('conn.call_tool("get-s', ['conn.call_tool("get-structured-content', 'conn.call_tool("get-sum']),
    ("r = conn.get_prompt('args", ["r = conn.get_prompt('args-prompt"]),
]


@pytest.mark.timeout(240)
def test_completion_of_mcp_lines_is_ours_alone(kernel: Kernel) -> None:
    argv = server_everything_cmd()
    result = kernel.run(f"import mcp_notebook\nconn = mcp_notebook.connect({argv!r}, name='ev', era='legacy')\n")
    assert result.status == "ok", result.describe()
    try:
        for code, expected in CASES:
            assert complete(kernel, code) == expected, code
        for code in ("%mcp call get-sum a=1 b=2 ", "%mcp call nope ", "%mcp connect x -- node ", "%mcp call get-sum a="):
            found = complete(kernel, code)
            words = {match[len(code) :] for match in found}
            assert not words & PYTHON_NAMES and not any(w.startswith("%") for w in words), (code, found)
        assert complete(kernel, "%mcp call get-sum a=1 b=2 ") == []  # nothing left to offer, and no blank entry
        assert set(complete(kernel, "r = %mcp ")) == {f"r = %mcp {name}" for name in SUBCOMMANDS}
        keywords = complete(kernel, 'conn.call_tool("get-sum", a=1, ')  # the tool's arguments first, Python's names after
        assert keywords[0] == 'conn.call_tool("get-sum", a=1, b=' and 'conn.call_tool("get-sum", a=1, a=' not in keywords
        assert 'conn.call_tool("get-sum", a=1, print' in keywords
        assert complete(kernel, "%mcp disconnect ") == ["%mcp disconnect ev"]
        assert kernel.run("other = mcp_notebook.demo('other', keepalive=None)").status == "ok"
        assert complete(kernel, "%mcp disconnect ") == ["%mcp disconnect ev", "%mcp disconnect other"]
        assert complete(kernel, "%mcp ping -c o") == ["%mcp ping -c other"]
        assert complete(kernel, "%mcp call -c ev get-su") == ["%mcp call -c ev get-sum"]  # the connection named
        assert complete(kernel, "%mcp call -c other get-su") == []  # the demo has none
        assert "print" in {m.rsplit(" ", 1)[-1] for m in complete(kernel, "x = pri")}  # Python is completed as before
    finally:
        kernel.run("mcp_notebook.close_all()")
