"""Feature checks of one connection: tools, content types, structured results, bad input, resources,
templates, prompts and completions. tests/api/test_features.py runs them over stdio,
tests/api/test_features_http.py again over Streamable HTTP."""

from __future__ import annotations

import pytest

import mcp_notebook
from mcp_notebook.api.resources.methods import expand_template
from mcp_notebook.api.tools.arguments import parse_pairs
from mcp_notebook.api.tools.validate import OutputSchemaError, ToolArgumentError
from support.features import sent

__all__ = [
    "test_tools_are_listed_with_their_schemas_and_cached",
    "test_echo_sum_image_links_references_and_annotations",
    "test_structured_content_is_validated_and_becomes_a_dataframe",
    "test_bad_input_is_one_clear_line_and_nothing_is_sent",
    "test_a_result_that_violates_the_output_schema_is_a_clear_error",
    "test_key_value_arguments_follow_the_input_schema",
    "test_resources_templates_blobs_prompts_and_completions",
]


def test_tools_are_listed_with_their_schemas_and_cached(conn):
    conn.list_tools()  # server-everything says its tool list changed just after the handshake
    tools = conn.list_tools()
    assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(tools.names())
    assert "trigger-sampling-request" not in tools.names()  # only for clients that declare sampling
    calls = len(sent(conn, "tools/list"))
    assert conn.list_tools() is tools and len(sent(conn, "tools/list")) == calls
    assert "a: number*, b: number*" in tools._text() and "[read-only]" in tools._text()  # annotations as badges
    html = tools._repr_mimebundle_()["text/html"]
    assert "<table" in html and "get-sum" in html


def test_echo_sum_image_links_references_and_annotations(conn):
    assert conn.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
    assert conn.call_tool("get-sum", {"a": 2, "b": 3.5}).text.endswith("5.5.")
    image = conn.call_tool("get-tiny-image")
    assert [b["type"] for b in image.content] == ["text", "image", "text"]
    assert '<img src="data:image/png;base64,' in image._repr_mimebundle_()["text/html"]
    links = conn.call_tool("get-resource-links", {"count": 2})
    assert [b["type"] for b in links.content].count("resource_link") == 2
    assert "resource link" in links._repr_mimebundle_()["text/html"]
    ref = conn.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    assert any(b["type"] == "resource" for b in ref.content) and "Resource 2" in str(ref)
    annotated = conn.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
    assert annotated.content[0]["annotations"]["priority"] == 1
    assert "annotations" in annotated._repr_mimebundle_()["text/html"]


def test_structured_content_is_validated_and_becomes_a_dataframe(conn):
    result = conn.call_tool("get-structured-content", {"location": "Chicago"})
    assert set(result.structured) >= {"temperature", "conditions", "humidity"}
    frame = result.to_dataframe()
    assert list(frame.columns)[:3] == ["temperature", "conditions", "humidity"] and len(frame) == 1


def test_bad_input_is_one_clear_line_and_nothing_is_sent(conn):
    conn.list_tools()
    before = len(sent(conn, "tools/call"))
    cases = [
        (("nope", {}), "unknown tool 'nope'"),
        (("get-sum", {"a": "x", "b": 1}), "'a' should be number, not string"),
        (("get-sum", {"a": 1}), "missing required 'b'"),
        (("get-structured-content", {"location": "Paris"}), "should be one of"),
    ]
    for args, words in cases:
        with pytest.raises(ToolArgumentError) as info:
            conn.call_tool(*args)
        assert words in str(info.value) and "\n" not in str(info.value)
    assert len(sent(conn, "tools/call")) == before


def test_a_result_that_violates_the_output_schema_is_a_clear_error(conn):
    conn.list_tools()
    schema = conn.tool("get-structured-content")["outputSchema"]
    schema["properties"]["temperature"]["type"] = "string"  # as if the server broke its promise
    with pytest.raises(
        OutputSchemaError, match=r"violates the tool's outputSchema: structuredContent.temperature should be string"
    ):
        conn.call_tool("get-structured-content", {"location": "Chicago"})


def test_key_value_arguments_follow_the_input_schema(conn):
    schema = conn.tool("get-annotated-message")["inputSchema"]
    assert parse_pairs(["messageType=success", "includeImage=true"], schema) == {"messageType": "success", "includeImage": True}
    assert parse_pairs(["a=2", "b=0.5"], conn.tool("get-sum")["inputSchema"]) == {"a": 2, "b": 0.5}
    assert parse_pairs(["message=42"], conn.tool("echo")["inputSchema"]) == {"message": "42"}
    with pytest.raises(ToolArgumentError, match=r"^'a' should be number \(JSON\), not 'two'$"):
        parse_pairs(["a=two"], conn.tool("get-sum")["inputSchema"])


def test_resources_templates_blobs_prompts_and_completions(conn):
    resources = conn.list_resources()
    assert "architecture.md" in resources.names()
    doc = conn.read_resource(resources.get("architecture.md")["uri"])
    assert doc.text and doc.contents[0]["mimeType"] == "text/markdown"
    templates = conn.list_resource_templates()
    assert (
        expand_template(templates.get("Dynamic Text Resource")["uriTemplate"], {"resourceId": 7})
        == "demo://resource/dynamic/text/7"
    )
    assert "Resource 7" in conn.read_template("Dynamic Text Resource", resourceId=7).text
    assert conn.read_template("Dynamic Blob Resource", resourceId=3).blobs[0].startswith(b"Resource 3")
    assert conn.list_prompts().get("args-prompt")["arguments"][0]["name"] == "city"
    assert "Paris" in conn.get_prompt("args-prompt", {"city": "Paris"}).text
    assert conn.get_prompt("simple-prompt").messages
    resource_prompt = conn.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"})
    assert any(m["content"]["type"] == "resource" for m in resource_prompt.messages)
    with pytest.raises(mcp_notebook.UsageError, match="missing required argument"):
        conn.get_prompt("args-prompt")
    assert conn.complete("prompt:completable-prompt", "department", "E") == ["Engineering"]
    assert conn.complete("prompt:completable-prompt", "name", "", {"department": "Sales"}) == ["David", "Eve", "Frank"]
    assert "1" in conn.complete(f"resource:{templates.get('Dynamic Text Resource')['uriTemplate']}", "resourceId", "1")
