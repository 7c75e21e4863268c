"""A tool's argument checks: fastjsonschema's verdict in the words the package has always used
(the table below is what the hand-written checker said, keyword by keyword), the same from a
tool's compiled checks as from `validate.problems`; compiled again when the tools listing changes."""

from __future__ import annotations

import pytest
from support.servers import server_everything_cmd

import mcp_notebook
from mcp_notebook.api.results.objects import Listing
from mcp_notebook.api.tools.checks import CompiledTool, ToolChecks
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
    },
    "required": ["name"],
    "additionalProperties": False,
}

ALLOWED = "(allowed: name, count, ratio, mode, fixed, tags, either, flag, nested)"
SAID = [
    ({"name": "ab"}, []),
    ({"name": "a"}, ["'name' should have at least 2 characters"]),
    ({"name": "abcdef"}, ["'name' should have at most 5 characters"]),
    ({"name": 1}, ["'name' should be string, not integer 1"]),
    ({}, ["missing required 'name'"]),
    ({"name": "ab", "count": 0}, []),
    ({"name": "ab", "count": 10}, ["'count' should be < 10"]),
    ({"name": "ab", "count": -1}, ["'count' should be >= 0"]),
    ({"name": "ab", "count": 2.0}, []),
    ({"name": "ab", "count": 2.5}, ["'count' should be integer, not number 2.5"]),
    ({"name": "ab", "count": True}, ["'count' should be integer, not boolean true"]),
    ({"name": "ab", "ratio": None}, []),
    ({"name": "ab", "ratio": 0.5}, []),
    ({"name": "ab", "ratio": 2}, ["'ratio' should be <= 1"]),
    ({"name": "ab", "ratio": "x"}, ["'ratio' should be number or null, not string \"x\""]),
    ({"name": "ab", "mode": "a"}, []),
    ({"name": "ab", "mode": "c"}, ['\'mode\' should be one of "a", "b"']),
    ({"name": "ab", "fixed": 3}, []),
    ({"name": "ab", "fixed": 4}, ["'fixed' should be 3"]),
    ({"name": "ab", "tags": ["x"]}, []),
    ({"name": "ab", "tags": []}, ["'tags' should have at least 1 items"]),
    ({"name": "ab", "tags": ["x", "y", "z"]}, ["'tags' should have at most 2 items"]),
    ({"name": "ab", "tags": [1]}, ["'tags'[0] should be string, not integer 1"]),
    ({"name": "ab", "either": "s"}, []),
    ({"name": "ab", "either": 3}, []),
    ({"name": "ab", "either": 1.5}, ["'either' should be one of: string, integer"]),
    ({"name": "ab", "flag": False}, []),
    ({"name": "ab", "flag": 0}, ["'flag' should be boolean, not integer 0"]),
    ({"name": "ab", "nested": {"x": 1}}, []),
    ({"name": "ab", "nested": {}}, ["missing required 'nested'.x"]),
    ({"name": "ab", "nested": {"x": 1, "y": 2}}, ["unknown 'nested'.y (allowed: x)"]),
    ({"name": "ab", "extra": 1}, [f"unknown 'extra' {ALLOWED}"]),
    ({"name": "ab", "extra": object()}, [f"unknown 'extra' {ALLOWED}"]),
    # Every problem, in the order the value is written: the object's own first, then each member's.
    (
        {"fixed": 4, "count": "x", "other": 1},
        [
            "missing required 'name'",
            "'fixed' should be 3",
            "'count' should be integer, not string \"x\"",
            f"unknown 'other' {ALLOWED}",
        ],
    ),
    (
        {"name": "ab", "tags": [1, "x", 2.5], "nested": {"x": "s"}},
        [
            "'tags' should have at most 2 items",
            "'tags'[0] should be string, not integer 1",
            "'tags'[2] should be string, not number 2.5",
            "'nested'.x should be number, not string \"s\"",
        ],
    ),
    ([], ["the value should be object, not array []"]),
    ("text", ['the value should be object, not string "text"']),
    (None, ["the value should be object, not null null"]),
]


@pytest.mark.parametrize(("value", "said"), SAID, ids=repr)
def test_each_keyword_is_said_as_it_always_was(value, said):
    assert problems(value, OBJECT) == said
    if isinstance(value, dict):
        assert CompiledTool({"inputSchema": OBJECT}).argument_problems(value) == said


def test_a_structured_result_is_named_structured_content():
    checks = CompiledTool({"outputSchema": {"type": "object", "properties": {"t": {"type": "string"}}, "required": ["n"]}})
    assert checks.output_problems({"t": 1}) == [
        "missing required structuredContent.n",
        "structuredContent.t should be string, not integer 1",
    ]


def test_a_value_of_the_wrong_type_is_said_once():
    assert problems(1, {"type": "string", "enum": ["a"], "minLength": 3}) == ["the value should be string, not integer 1"]
    assert problems({"a": 1}, {"type": "array", "items": {"type": "string"}}) == [
        'the value should be array, not object {"a": 1}'
    ]


def test_a_value_matching_no_branch_is_told_the_branches_briefly():
    either = {"anyOf": [{"type": "integer", "minimum": 0}, {"const": "auto"}, {"enum": ["x", "y"]}, {"type": "null"}]}
    assert problems(-1, either) == ['the value should be one of: integer >= 0, "auto", "x" or "y", null']
    shapes = {"oneOf": [{"type": "object", "properties": {"w": {}, "h": {}}}, {"type": "array"}, {"type": "string"}]}
    assert problems({"size": 3}, {"properties": {"size": shapes}}) == ["'size' should be one of: object (w, h), array, string"]
    many = {"anyOf": [{"const": n} for n in range(8)]}
    assert problems(9, many) == ["the value should be one of: 0, 1, 2, 3, 4, ..."]


def test_what_the_phrases_do_not_read_is_said_in_fastjsonschema_s_words():
    assert problems({"p": "y"}, {"properties": {"p": {"pattern": "^x"}}}) == ["'p' must match pattern ^x"]
    assert problems({"t": ["x", "y"]}, {"properties": {"t": {"items": {"pattern": "^x"}}}}) == ["'t'[1] must match pattern ^x"]
    assert problems(3, {"oneOf": [{"type": "integer"}, {"type": "number"}]}) == [
        "the value must be valid exactly by one definition (2 matches found)"
    ]
    defs = {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert problems({"a": "x"}, defs) == ["'a' must be integer"]
    assert CompiledTool({"inputSchema": defs}).argument_problems({"a": "x"}) == ["'a' must be integer"]
    assert CompiledTool({"inputSchema": defs}).argument_problems({"a": 1}) == []


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {},
        {"properties": {"a": {"type": "whatever"}}},  # no such type: the server decides
        {"properties": {"a": {"$ref": "http://127.0.0.1:9/never.json"}}},  # never fetched (SEP-2106)
        {"properties": {"a": {"$ref": "#/nowhere"}}},
        {"properties": {"a": {"type": "array", "prefixItems": [{"type": "integer"}]}}},  # 2020-12, not draft-07
    ],
    ids=repr,
)
def test_a_schema_fastjsonschema_cannot_decide_exactly_is_left_to_the_server(schema):
    for value in ({"a": ["x"]}, {}, "text"):
        assert problems(value, schema) == []
        assert CompiledTool({"inputSchema": schema}).argument_problems(value) == []


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


def test_an_unknown_tool_is_said_in_a_short_line_closest_names_first():
    """server-everything has a dozen tools or more: the error counts them and names a few, never all."""
    with mcp_notebook.connect(server_everything_cmd(), name="ev", era="legacy") as conn:
        count = len(conn.list_tools())
        with pytest.raises(ToolArgumentError) as typo:
            conn.call_tool("get-sums", a=1, b=2)
        said = str(typo.value)
        assert said.startswith("ev: unknown tool 'get-sums'; did you mean 'get-sum'?"), said
        assert said.endswith(f"(list_tools() or %mcp tools lists all {count})") and len(said) < 160, said
        with pytest.raises(ToolArgumentError) as far:
            conn.call_tool("zzz")
        said = str(far.value)
        assert said.startswith(f"ev: unknown tool 'zzz'; the server has {count} tools: 'echo', "), said
        assert said.endswith(", ... (list_tools() or %mcp tools lists them)") and said.count("'") == 2 + 2 * 3, said
        assert len(said) < 160, said
