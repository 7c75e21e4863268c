"""A tool's compiled checks decide as `validate.problems` does, for every keyword it covers,
and are compiled again when the tools listing changes."""

from __future__ import annotations

import pytest
from support.servers import server_everything_cmd

import mcp_notebook
from mcp_notebook.api.results.objects import Listing
from mcp_notebook.api.tools.checks import CompiledTool, ToolChecks, passes
from mcp_notebook.api.tools.validate import ToolArgumentError, problems
from mcp_notebook.runtime import get_runtime

pytestmark = [pytest.mark.node]

OBJECT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "count": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
        "ratio": {"type": ["number", "null"], "maximum": 1},
        "mode": {"enum": ["a", "b"]},
        "fixed": {"const": 3},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "flag": {"type": "boolean"},
        "nested": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": False},
        "anything": {"type": "whatever"},
    },
    "required": ["name"],
    "additionalProperties": False,
}

VALUES = [
    {"name": "ab"},
    {"name": "a"},
    {"name": "abcdef"},
    {"name": 1},
    {},
    {"name": "ab", "count": 0},
    {"name": "ab", "count": 10},
    {"name": "ab", "count": -1},
    {"name": "ab", "count": 2.0},
    {"name": "ab", "count": 2.5},
    {"name": "ab", "count": True},
    {"name": "ab", "ratio": None},
    {"name": "ab", "ratio": 0.5},
    {"name": "ab", "ratio": 2},
    {"name": "ab", "ratio": "x"},
    {"name": "ab", "mode": "a"},
    {"name": "ab", "mode": "c"},
    {"name": "ab", "fixed": 3},
    {"name": "ab", "fixed": 4},
    {"name": "ab", "tags": ["x"]},
    {"name": "ab", "tags": []},
    {"name": "ab", "tags": ["x", "y", "z"]},
    {"name": "ab", "tags": [1]},
    {"name": "ab", "either": "s"},
    {"name": "ab", "either": 3},
    {"name": "ab", "either": 1.5},
    {"name": "ab", "flag": False},
    {"name": "ab", "flag": 0},
    {"name": "ab", "nested": {"x": 1}},
    {"name": "ab", "nested": {}},
    {"name": "ab", "nested": {"x": 1, "y": 2}},
    {"name": "ab", "anything": object()},
    {"name": "ab", "extra": 1},
    [],
    "text",
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_compiled_schema_decides_as_problems_does(value):
    assert passes(OBJECT)(value) == (not problems(value, OBJECT))


@pytest.mark.parametrize(
    "schema",
    [None, {}, {"type": "object"}, {"required": "name"}, {"type": [{"odd": 1}]}, {"properties": {"a": "not a schema"}}],
    ids=repr,
)
def test_odd_schemas_are_left_to_problems(schema):
    def outcome(decide, *args):
        try:
            return decide(*args)
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            return type(exc)

    for value in ({"name": 1}, {}, "text", {"a": 1}):
        assert outcome(passes(schema), value) == outcome(lambda v: not problems(v, schema), value)


def test_the_warning_is_about_undeclared_names_only_where_the_schema_says_nothing():
    assert CompiledTool({"inputSchema": {"properties": {"a": {}}}}).may_warn({"b": 1})
    assert not CompiledTool({"inputSchema": {"properties": {"a": {}}}}).may_warn({"a": 1})
    assert not CompiledTool({"inputSchema": {"additionalProperties": True}}).may_warn({"b": 1})
    assert not CompiledTool({}).may_warn({"b": 1})


def test_the_checks_are_compiled_once_per_listing():
    checks, tool = ToolChecks(), {"name": "t", "inputSchema": {"type": "object"}}
    first = Listing("tools", [tool])
    assert checks.get(first, "t") is checks.get(first, "t")
    assert checks.get(first, "missing") is None
    second = Listing("tools", [dict(tool)])
    assert checks.get(second, "t") is not checks.get(first, "t")


def test_a_changed_listing_is_fetched_and_checked_again():
    with mcp_notebook.connect(server_everything_cmd(), name="everything", era="legacy") as conn:
        conn.list_tools()
        with pytest.raises(ToolArgumentError, match="'a' should be number"):
            conn.call_tool("get-sum", a="x", b=1)
        lists = len([e for e in conn.trace.frames("out") if e.method == "tools/list"])
        frame = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
        get_runtime().call_sync(conn._session.inbound.frame_received, frame)
        with pytest.raises(ToolArgumentError, match="'a' should be number"):
            conn.call_tool("get-sum", a="x", b=1)
        assert len([e for e in conn.trace.frames("out") if e.method == "tools/list"]) == lists + 1
        assert conn.call_tool("get-sum", a=1, b=2).text.endswith("3.")
