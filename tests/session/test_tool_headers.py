"""`x-mcp-header` (2026-07-28, Streamable HTTP): invalid annotations exclude their tool (with a
warning, a trace event and a violation), valid ones are mirrored into `Mcp-Param-*` headers the
official SDK's server accepts, null and absent values give no header, unsafe ones go Base64."""

from __future__ import annotations

import base64
import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.http_servers import serving

import mcp_notebook
from mcp_notebook.api.display import frontend
from mcp_notebook.protocol import modern
from mcp_notebook.protocol.tool_headers import header_problem, param_headers

SERVER = [sys.executable, str(Path(__file__).parents[1] / "servers" / "sdk_header_server.py")]
INVALID = {"space_in_name", "empty_name", "on_a_number", "twice", "in_items"}
TEXT_ITEMS = {"type": "string"}


def schema(**properties: dict) -> dict:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        ({"v": {"type": "string", "x-mcp-header": ""}}, "is empty"),
        ({"v": {"type": "string", "x-mcp-header": "My Region"}}, "not an HTTP header token"),
        ({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}, "not an HTTP header token"),
        ({"v": {"type": "string", "x-mcp-header": "Région"}}, "not an HTTP header token"),
        ({"v": {"type": "string", "x-mcp-header": "Region\t1"}}, "not an HTTP header token"),
        ({"v": {"type": "string", "x-mcp-header": 7}}, "not a string"),
        ({"v": {"type": "object", "x-mcp-header": "Data"}}, "of type 'object'"),
        ({"v": {"type": "array", "items": TEXT_ITEMS, "x-mcp-header": "Items"}}, "of type 'array'"),
        ({"v": {"type": "null", "x-mcp-header": "Nil"}}, "of type 'null'"),
        ({"v": {"type": "number", "x-mcp-header": "Score"}}, "of type 'number'"),
        ({"v": {"x-mcp-header": "Untyped"}}, "without a single type"),
        (
            {"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}},
            "repeats 'MyField'",
        ),
        ({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}}, "/properties/v/items"),
        ({"v": {"anyOf": [{"type": "string", "x-mcp-header": "Alt"}]}}, "reached through 'properties' alone"),
    ],
)
def test_an_invalid_annotation_is_named_with_its_reason(properties: dict, reason: str) -> None:
    problem = header_problem(schema(**properties))
    assert problem is not None and reason in problem


def test_valid_annotations_pass_nested_ones_too_and_data_is_not_a_schema() -> None:
    nested = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        scope={"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
        flag={"type": "boolean", "x-mcp-header": "Flag", "default": {"x-mcp-header": "not a schema"}},
    )
    assert header_problem(nested) is None
    assert header_problem({"type": "object", "x-mcp-header": "Root"}) is not None  # the root is no property
    assert header_problem(None) is None and header_problem({"type": "object"}) is None


def test_a_deeply_nested_schema_is_walked_without_recursion() -> None:
    deep: dict = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"d": deep}}
    assert header_problem(deep) is None


def test_headers_omit_null_and_absent_values_and_encode_the_unsafe() -> None:
    spec = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        tab={"type": "string", "x-mcp-header": "Tab"},
        scope={"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}},
        bad={"type": "string", "x-mcp-header": "Has Space"},
    )
    headers = param_headers(
        spec, {"region": "us west 1", "verbose": None, "tab": "a\tb", "scope": {"tenant": "t"}, "bad": "x"}, modern.header_value
    )
    assert headers == {
        "Mcp-Param-Region": "us west 1",
        "Mcp-Param-Tab": "=?base64?" + base64.b64encode(b"a\tb").decode() + "?=",
        "Mcp-Param-Tenant": "t",
    }
    assert param_headers(spec, {"verbose": False, "priority": 0}, modern.header_value) == {
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Priority": "0",
    }


@pytest.fixture
def canary() -> Iterator[tuple[str, list[str]]]:
    """A loopback URL that records each request it gets: a schema's network `$ref` points at it."""
    hits: list[str] = []

    class Canary(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "object", "properties": {"displayName": {"type": "integer"}}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Canary)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/canary/profile-schema.json", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class Warned(frontend.FrontEnd):
    """A front end that keeps the warnings it is given."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, text: str) -> None:
        self.warnings.append(text)


@pytest.fixture
def warned() -> Iterator[list[str]]:
    previous, user = frontend.current(), Warned()
    frontend.use(user)
    yield user.warnings
    frontend.use(previous)


@pytest.fixture
def header_server(port: int):
    with serving([*SERVER, "--port", str(port)], port) as base:
        yield base + "/mcp"


def test_invalid_tools_are_left_out_with_a_warning_and_a_violation(header_server: str, warned: list[str]) -> None:
    with mcp_notebook.connect(header_server, name="hdr") as conn:
        assert conn.era == "modern"
        assert [t["name"] for t in conn.list_tools()] == ["mirror"]
        assert len(warned) == len(INVALID) and all(w.startswith("hdr: tool ") for w in warned)
        assert any("'space_in_name' left out of the listing: x-mcp-header 'My Region'" in w for w in warned)
        excluded = {e.detail["tool"] for e in conn.trace.entries() if e.kind == "tool-excluded"}
        assert excluded == INVALID
        rules = [(v.rule, v.where) for v in conn.violations]
        assert sorted(rules) == sorted(("tool-header", f"/result/tools/{i}/inputSchema") for i in range(1, 6))
        assert conn.health.violations == len(INVALID)
        # A call to an excluded tool never reaches the wire, with or without validation.
        with pytest.raises(mcp_notebook.McpNotebookError, match="unknown tool 'space_in_name'"):
            conn.call_tool("space_in_name", value="x")
        with pytest.raises(
            mcp_notebook.ProtocolViolation, match="'space_in_name' was left out of the listing: x-mcp-header 'My Region'"
        ):
            conn.call_tool("space_in_name", {"value": "x"}, validate=False)
        assert not [e for e in conn.trace.frames("out") if e.method == "tools/call"]
        conn.list_tools(refresh=True)  # the same exclusions again: told once
        assert len(warned) == len(INVALID)


def test_the_sdk_server_accepts_the_mirrored_headers(header_server: str) -> None:
    with mcp_notebook.connect(header_server, name="hdr") as conn:
        arguments = {"region": " Zürich ", "priority": 42, "verbose": None, "scope": {"tenant": "acme"}, "note": "n"}
        received = json.loads(conn.call_tool("mirror", arguments, validate=False).text)  # null breaks the schema: sent as is
        assert received == {
            "mcp-param-region": "=?base64?" + base64.b64encode(" Zürich ".encode()).decode() + "?=",
            "mcp-param-priority": "42",
            "mcp-param-tenant": "acme",
        }
        received = json.loads(conn.call_tool("mirror", {"region": "eu", "verbose": False}).text)
        assert received == {"mcp-param-region": "eu", "mcp-param-verbose": "false"}


def test_a_network_ref_in_a_tool_schema_is_never_fetched(port: int, canary: tuple[str, list[str]]) -> None:
    """SEP-2106: listing, describing, checking and calling a tool whose input and output schemas
    `$ref` a network URI never dereferences it (the same-document `#/$defs/...` may be used)."""
    url, hits = canary
    with serving([*SERVER, "--port", str(port), "--canary", url], port) as base:
        with mcp_notebook.connect(base + "/mcp", name="ref") as conn:
            assert "lookup" in [t["name"] for t in conn.list_tools()]
            conn.describe_tool("lookup")
            result = conn.call_tool("lookup", id="ada-1", profile={"displayName": "Ada"})
            assert result.structured == {"profile": {"displayName": "Ada"}}
            assert [v.rule for v in conn.violations if v.method == "tools/call"] == []
    assert hits == []
