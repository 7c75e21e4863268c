"""`%mcp` lines parsed as users type them, and tool arguments given as keywords, against real
peers: options anywhere in the line, JSON written unquoted in a `key=value` pair, keyword
arguments to `call_tool`, and arguments a tool's schema does not declare."""

from __future__ import annotations

import asyncio
import json
import re
import warnings

import pytest
from IPython.core.error import UsageError as IPythonUsageError
from support.servers import sdk_server_cmd, server_everything_cmd

import mcp_notebook
from mcp_notebook import ExtraArgumentWarning
from mcp_notebook.notebook.magics import words

pytestmark = [pytest.mark.node]


def sent_arguments(conn: mcp_notebook.Connection) -> dict:
    """The arguments of the last tools/call frame we sent."""
    frames = [e for e in conn.trace.frames("out") if e.method == "tools/call"]
    return frames[-1].message["params"]["arguments"]


@pytest.mark.parametrize(
    "line",
    [
        "call --timeout 5 get-sum a=1 b=2",
        "call get-sum --timeout 5 a=1 b=2",
        "call get-sum a=1 --timeout 5 b=2",
        "call get-sum a=1 b=2 --timeout 5",
        "call get-sum --conn ev a=1 --no-progress b=2",
    ],
)
def test_options_go_anywhere_in_the_line(shell, ev, line):
    assert shell.run_line_magic("mcp", line).text.endswith("3.")
    assert sent_arguments(ev) == {"a": 1, "b": 2}


def test_unquoted_json_in_a_pair_arrives_intact(shell, fm):
    result = shell.run_line_magic(
        "mcp", 'call add_entities entities=[{"name": "Bob", "observations": ["likes tea", "a=b"]}] tags={"team": "x y"}'
    )
    expected = {"entities": [{"name": "Bob", "observations": ["likes tea", "a=b"]}], "tags": {"team": "x y"}}
    assert json.loads(result.text) == expected and sent_arguments(fm) == expected
    quoted = shell.run_line_magic("mcp", """call add_entities 'entities=[{"name": "Ann"}]'""")  # shell quoting still works
    assert json.loads(quoted.text)["entities"] == [{"name": "Ann", "observations": []}]


def test_json_text_for_a_string_argument_is_kept_as_written(shell, ev):
    assert shell.run_line_magic("mcp", 'call echo message={"a": 1, "b": [2, 3]}').text == 'Echo: {"a": 1, "b": [2, 3]}'


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('call echo message={"a": 1', "no closing '}'"),
        ("call echo message=[1, 2}", "'}' closes '['"),
        ("call echo 'message=hi", "no closing quotation"),
    ],
)
def test_an_unfinished_value_is_a_one_line_error(shell, ev, line, says):
    with pytest.raises(IPythonUsageError, match=re.escape(says)):
        shell.run_line_magic("mcp", line)


@pytest.mark.parametrize(
    "line",
    [
        "a b  c",
        "a 'b c' \"d e\" f\\ g",
        """x='{"a": 1}' y="[1, 2]" """,
        'q="Ada Lovelace" n=3',
        "connect demo -- python -c 'print(1)'",
    ],
)
def test_lines_without_bare_json_split_as_the_shell_splits_them(line):
    import shlex

    assert words.split(line) == shlex.split(line)


def test_call_tool_takes_keyword_arguments(ev):
    assert ev.call_tool("get-sum", a=1, b=2).text.endswith("3.")
    assert sent_arguments(ev) == {"a": 1, "b": 2}
    assert ev.call_tool("get-sum", {"a": 5}, b=2).text.endswith("7.")  # a dict and keywords together
    with pytest.raises(mcp_notebook.ToolArgumentError, match="'a' given both in the dict and as a keyword"):
        ev.call_tool("get-sum", {"a": 5}, a=2, b=1)


def test_acall_tool_takes_keyword_arguments(ev):
    assert asyncio.run(ev.aio.call_tool("get-sum", a=20, b=22)).text.endswith("42.")


def test_an_argument_named_like_a_parameter_goes_in_the_dict_or_as_a_keyword_for_name(fm):
    assert fm.call_tool("echo", text="hi", timeout=10).text == "hi"  # timeout is the call's, not the tool's
    assert "timeout" not in sent_arguments(fm)
    with pytest.raises(mcp_notebook.ToolArgumentError, match="unknown 'name'"):
        fm.call_tool("echo", text="hi", name="x")  # `name` is positional-only: a keyword is the tool's argument


def test_undeclared_arguments_are_refused_when_the_schema_forbids_them(fm):
    with pytest.raises(mcp_notebook.ToolArgumentError, match=r"unknown 'c' \(allowed: a, b\)"):
        fm.call_tool("add", a=1, b=2, c=3)
    assert not [e for e in fm.trace.frames("out") if e.method == "tools/call"]


def test_undeclared_arguments_are_sent_with_a_warning_when_the_schema_says_nothing():
    conn = mcp_notebook.connect(sdk_server_cmd(), name="sdk", era="legacy")
    try:
        with pytest.warns(ExtraArgumentWarning, match=r"does not declare 'loud' \(declared: text\)"):
            assert conn.call_tool("echo", text="hi", loud=True).text == "hi"
        assert sent_arguments(conn) == {"text": "hi", "loud": True}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            conn.call_tool("echo", text="quiet")  # declared arguments only: no warning
    finally:
        conn.close()


def test_connect_offers_roots(shell, tmp_path, capsys):
    argv = " ".join(server_everything_cmd())
    conn = shell.run_line_magic("mcp", f"connect rooted --roots {tmp_path} {tmp_path.parent} --era legacy -- {argv}")
    try:
        assert conn.roots == [
            {"uri": tmp_path.as_uri(), "name": tmp_path.name},
            {"uri": tmp_path.parent.as_uri(), "name": tmp_path.parent.name},
        ]
        listed = conn.call_tool("get-roots-list").text  # registered only for a client that declares roots
        assert "(2 total)" in listed and tmp_path.as_uri() in listed
    finally:
        conn.close()
