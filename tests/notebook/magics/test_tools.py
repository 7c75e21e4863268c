"""A tool's own view (`%mcp tool NAME`, `%mcp tools NAME`, `conn.describe_tool`) and the form
built from its input schema, against server-everything and the FastMCP peer."""

from __future__ import annotations

import json
import shlex

import pytest
from IPython.core.error import UsageError as IPythonUsageError

from mcp_notebook.api.tools.view import ToolView
from mcp_notebook.notebook.widgets.tool_form import ToolForm

pytestmark = [pytest.mark.node]


def test_tools_name_shows_the_tool_not_a_connection(shell, ev, capsys):
    shell.run_line_magic("mcp", "tools get-structured-content")
    by_tools = capsys.readouterr().out
    shell.run_line_magic("mcp", "tool get-structured-content")
    assert capsys.readouterr().out == by_tools
    description = ev.tool("get-structured-content")["description"]
    assert len(description) > 70 and description in by_tools  # in full, not clipped
    for line in (
        'location: "New York"|"Chicago"|"Los Angeles"*  - Choose city',  # enum and required mark
        "output:\n  temperature: number*  - Temperature in celsius",  # the output schema
        "annotations: readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false",
        "example:\n  %mcp call get-structured-content location='New York'",
    ):
        assert line in by_tools
    with pytest.raises(IPythonUsageError, match="no connection named 'nosuch'"):  # neither a tool nor a connection
        shell.run_line_magic("mcp", "tools nosuch")
    assert "get-structured-content" in shell.run_line_magic("mcp", "tools ev").names()  # a connection's name still lists
    shell.run_line_magic("mcp", "tools -c ev get-structured-content")  # the connection named, then the tool
    assert capsys.readouterr().out == by_tools
    shell.run_line_magic("mcp", "tools get-structured-content -c ev")
    assert capsys.readouterr().out == by_tools


def test_nested_schemas_read_as_a_tree(fm):
    text = fm.describe_tool("add_entities")._text()
    assert "  entities: array of object*\n    name: string*\n    observations: array of string [default []]\n" in text
    assert "  tags: object|null [default null]" in text


@pytest.mark.parametrize("tool", ["get-sum", "get-structured-content", "get-annotated-message", "echo"])
def test_the_example_calls_run_as_written(shell, ev, tool):
    magic, python = ev.describe_tool(tool).examples
    assert not shell.run_line_magic("mcp", magic.removeprefix("%mcp ")).is_error
    assert not eval(python, {"conn": ev}).is_error  # our own example, on our connection


def test_the_example_of_json_arguments_runs_as_written(shell, fm):
    magic, python = fm.describe_tool("add_entities").examples
    assert magic == '%mcp call add_entities entities=[{"name": "text"}]'
    assert json.loads(shell.run_line_magic("mcp", magic.removeprefix("%mcp ")).text)["entities"][0]["name"] == "text"
    assert json.loads(eval(python, {"conn": fm}).text)["entities"][0]["name"] == "text"


def test_server_text_is_escaped_in_html(ev):
    view = ToolView({"name": "<b>x</b>", "description": "<script>alert(1)</script>", "inputSchema": {}}, "ev")
    html = view._repr_mimebundle_()["text/html"]
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>x</b>" not in html
    assert shlex.split(view.examples[0])[2] == "<b>x</b>"


def test_the_form_calls_the_tool_with_what_the_user_set(ev):
    form = ToolForm(ev, ev.tool("get-annotated-message"))
    assert set(form.fields) == {"messageType", "includeImage"}
    form.fields["messageType"].value = "success"
    assert form.arguments() == {"messageType": "success"}  # includeImage untouched: not sent
    result = form.call()
    assert result is not None and not result.is_error and "done" in form.status.value
    sent = [e for e in ev.trace.frames("out") if e.method == "tools/call"][-1].message["params"]["arguments"]
    assert sent == {"messageType": "success"}
    form.fields["includeImage"].value = True
    assert form.arguments() == {"messageType": "success", "includeImage": True}


def test_the_form_refuses_what_the_schema_refuses(ev):
    form = ToolForm(ev, ev.tool("get-sum"))
    form.fields["a"].value, form.fields["b"].value = 2, 40
    assert form.call().text.endswith("42.")
    calls = len([e for e in ev.trace.frames("out") if e.method == "tools/call"])
    form = ToolForm(ev, ev.tool("get-structured-content"))  # its required enum left unset
    assert form.call() is None and "location" in form.status.value
    assert len([e for e in ev.trace.frames("out") if e.method == "tools/call"]) == calls


def test_the_form_takes_json_for_arrays_of_objects(fm):
    form = ToolForm(fm, fm.tool("add_entities"))
    assert form.fields["entities"].value == '[{"name": "text"}]'  # a required JSON field starts from a sample
    form.fields["entities"].value = '[{"name": "Bob", "observations": ["x"]}]'
    assert json.loads(form.call().text)["entities"] == [{"name": "Bob", "observations": ["x"]}]
    form.fields["entities"].value = "[{"
    assert form.call() is None and "e03131" in form.status.value  # not JSON: one red line, nothing sent


def test_the_form_sends_whole_numbers_as_the_magic_does(shell):
    import mcp_notebook

    with mcp_notebook.demo("d", keepalive=None) as conn:
        form = ToolForm(conn, conn.tool("add"))
        form.fields["a"].value, form.fields["b"].value = 2, 40  # number boxes: the widget holds 2.0 and 40.0
        by_form = form.call()
        by_magic = shell.run_line_magic("mcp", "call add a=2 b=40")
        assert by_form is not None and by_form.structured == by_magic.structured == {"sum": 42}
        assert type(by_form.structured["sum"]) is int


def test_tools_shows_inline_code_as_code_not_backticks(shell):
    import mcp_notebook

    with mcp_notebook.demo("d", keepalive=None):
        listing = shell.run_line_magic("mcp", "tools")
        bundle = listing._repr_mimebundle_()
    text, html = bundle["text/plain"], bundle["text/html"]
    assert "Sleep for seconds in steps" in text and "`" not in text
    assert "Sleep for <code>seconds</code> in <code>steps</code>" in html and "`" not in html
    assert "word-break:normal;overflow-wrap:break-word" in html  # prose wraps between words, not mid-word
