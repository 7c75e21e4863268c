"""Test peer: a server built with the official Python SDK (mcp==2.3.0) whose every
human-readable string is markup the test chooses (`--markup`), for the escaping tests.

We did not write its protocol handling: the SDK does. What carries the markup: the
server's name, version and instructions, a line on stderr, and the names, titles and
descriptions of everything it lists. Its tools:

* ``MARKUP(mode)``   -> the tool named by the markup itself: text, an image and an audio
                        block of a bad MIME type, resource links (one ``javascript:``, one
                        ``https:`` whose path closes an attribute), an embedded resource,
                        annotations and structured content, all carrying the markup
* ``fails()``        -> a tool error (``isError``) whose text is the markup
* ``refuses()``      -> a JSON-RPC error whose message is the markup
* ``shout()``        -> log messages (logger and data; one short, one long) and a progress
                        message of markup
* ``ask()``          -> a form elicitation: message, field titles, descriptions, enum values,
                        and a required field whose property name is the markup
* ``open_link(url)`` -> a URL elicitation with the markup as message; reports completion on accept
* ``sample()``       -> a sampling request: system prompt and message of markup
* ``touch(uri)``     -> announces that resource ``uri`` changed
* ``view()``         -> the markup, as a tool with an MCP App view (``ui://hostile/view``:
                        a page of markup, listed last among the resources)

A prompt named by the markup, a resource whose URI, name, MIME type and text carry it, and
a resource template.

Usage: python hostile_server.py --markup MARKUP   (stdio)
"""

# No `from __future__ import annotations`: the SDK reads each tool's signature, and its
# `Literal[markup]` must be a real type, not a string naming a local variable.
import argparse
import sys
import warnings
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
from mcp.shared.exceptions import MCPError
from mcp_types import (
    Annotations,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import Field, create_model

ELICITATION_ID = "hostile-1"
APP_VIEW = "ui://hostile/view"
APP_MIME = "text/html;profile=mcp-app"


def resource_uri(markup: str) -> str:
    """The hostile resource's URI (an RFC 6570 template may not hold a space)."""
    return "hostile://x/" + markup.replace(" ", "%20")


def build(markup: str) -> MCPServer:
    m = markup
    mcp = MCPServer(name=m, title=m, version=m, instructions=m, log_level="ERROR")
    note = Annotations(last_modified=m)

    def tool_result(mode: Literal[m, "plain"] = m) -> CallToolResult:  # type: ignore[valid-type]
        return CallToolResult(
            content=[
                TextContent(type="text", text=m, annotations=note),
                ImageContent(type="image", data="AAAA", mime_type=f"image/png{m}"),
                AudioContent(type="audio", data="AAAA", mime_type=f"audio/wav{m}"),
                ResourceLink(type="resource_link", uri="javascript:alert(3)", name=m, title=m, description=m),
                ResourceLink(type="resource_link", uri="https://example.com/" + m, name=m, description=m),
                EmbeddedResource(type="resource", resource=TextResourceContents(uri=resource_uri(m), text=m, mime_type=m)),
            ],
            structured_content={"rows": [{"name": m, "value": m}]},
        )

    mcp.add_tool(tool_result, name=m, title=m, description=m, annotations=ToolAnnotations(title=m, read_only_hint=True))

    @mcp.tool(description=m)
    def fails() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=m)], is_error=True)

    @mcp.tool(description=m)
    def refuses() -> str:
        raise MCPError(-32000, m, m)

    @mcp.tool(description=m)
    async def shout(ctx: Context) -> str:
        with warnings.catch_warnings():  # the SDK marks logging deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            await ctx.info(m, logger_name=m)
            await ctx.info(m * 8, logger_name=m)  # long: a panel folds it into a <details>
        await ctx.report_progress(1, 2, m)
        return m

    answer = create_model(
        "Answer",
        choice=(Literal[m], Field(default=m, title=m, description=m)),  # type: ignore[valid-type]
        note=(str, Field(default=m, title=m, description=m)),
        named=(str, Field(alias=m, title=m, description=m)),  # required, and its property name is the markup
    )

    @mcp.tool(description=m)
    async def ask(ctx: Context) -> str:
        result = await ctx.elicit(m, answer)
        return result.action

    @mcp.tool(description=m)
    async def open_link(url: str, ctx: Context) -> str:
        result = await ctx.elicit_url(m, url, ELICITATION_ID)
        if result.action == "accept":
            await ctx.session.send_elicit_complete(ELICITATION_ID, ctx.request_id)
        return result.action

    @mcp.tool(description=m)
    async def sample(ctx: Context) -> str:
        with warnings.catch_warnings():  # deprecated in 2026-07-28 (SEP-2577); this server speaks 2025-11-25
            warnings.simplefilter("ignore")
            reply = await ctx.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=m))], max_tokens=8, system_prompt=m
            )
        return reply.content.text if isinstance(reply.content, TextContent) else "?"

    @mcp.tool(description=m)
    async def touch(uri: str, ctx: Context) -> str:
        await ctx.notify_resource_updated(uri)
        return m

    def prompt(topic: str = Field(default=m, description=m)) -> list[UserMessage | AssistantMessage]:
        embedded = EmbeddedResource(type="resource", resource=TextResourceContents(uri=resource_uri(m), text=topic))
        return [UserMessage(m), AssistantMessage(embedded)]

    mcp.prompt(name=m, title=m, description=m)(prompt)

    mcp.resource(resource_uri(m), name=m, title=m, description=m, mime_type=m)(lambda: m)
    mcp.resource("hostile://t/{part}", name=m, title=m, description=m, mime_type="text/plain")(lambda part: m + part)

    @mcp.tool(description=m, meta={"ui": {"resourceUri": APP_VIEW}})
    def view() -> str:
        return m

    mcp.resource(APP_VIEW, name=m, title=m, description=m, mime_type=APP_MIME)(lambda: f"<!DOCTYPE html><p>{m}</p>")
    return mcp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markup", required=True, help="the text every human-readable field carries")
    args = parser.parse_args(argv)
    sys.stderr.write(args.markup + "\n")  # a server's stderr is shown too
    sys.stderr.flush()
    build(args.markup).run("stdio")


if __name__ == "__main__":
    main()
