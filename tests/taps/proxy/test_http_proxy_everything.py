"""The tap's HTTP proxy between the official SDK client (mcp 2.3.0, legacy era) and
server-everything's Streamable HTTP mode (the TypeScript SDK's server): the same results, the
same frames sent, and the sink saw exactly what the client sent and received."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.http_wire import Wire

from mcp_notebook.taps.proxy.server import TapProxy
from mcp_notebook.taps.wire.records import CLIENT, EVENT, HELLO, SERVER, Record

pytestmark = [pytest.mark.node, pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")]


async def session(url: str, wire: Wire) -> dict[str, Any]:
    async with wire.client() as http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"message": "through the tap"})
        added = await client.call_tool("get-sum", {"a": 2, "b": 3})
        resource = await client.read_resource("demo://resource/static/document/architecture.md")
        await client.send_ping()
        return {
            "tools": sorted(tool.name for tool in tools.tools),
            "echo": echoed.model_dump(exclude={"meta"}),
            "sum": added.model_dump(exclude={"meta"}),
            "resource": resource.model_dump(exclude={"meta"}),
        }


def test_the_sdk_client_gets_the_same_from_server_everything_through_the_proxy(url: str) -> None:
    direct = Wire()
    expected = anyio.run(session, url, direct)
    records: list[Record] = []
    with TapProxy(url, records.append) as proxy:
        through = Wire()
        got = anyio.run(session, proxy.url, through)
    assert got == expected
    assert through.sent == direct.sent
    assert [r.data for r in records if r.side == CLIENT] == through.sent
    assert sorted(r.data for r in records if r.side == SERVER) == sorted(through.received)
    assert [r.detail["session"] for r in records if r.side == EVENT and r.name == HELLO] == [1]
