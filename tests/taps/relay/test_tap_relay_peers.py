"""The stdio relay with real peers: the official SDK client (`mcp` 2.3.0, legacy era) talking to
server-everything gets the same results through the relay as directly, and the frames each side
wrote are recorded byte for byte (a second relay inside the first sees exactly what the first
recorded). Also prints the ping round trip through the relay against direct (not asserted)."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.servers import server_everything_cmd
from support.tap_relay import ENV_DIR, short_tap_dir, tap_cmd

from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.recording import read_recording
from mcp_notebook.taps.wire.records import CLIENT, CLOSED, EVENT, HELLO, SERVER, Record

pytestmark = [pytest.mark.node, pytest.mark.anyio, pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with short_tap_dir() as folder:
        monkeypatch.setenv(ENV_DIR, str(folder))
        yield folder


async def _session(argv: list[str]) -> list[Any]:
    """What the SDK client gets from a fixed series of calls (as JSON-able dumps)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {key: os.environ[key] for key in (ENV_DIR, "PYTHONPATH") if key in os.environ}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            results: list[Any] = [client.server_info, client.protocol_version]
            await client.send_ping()
            results.append(await client.list_tools())
            results.append(await client.call_tool("echo", {"message": "through the tap ✓"}))
            results.append(await client.call_tool("get-sum", {"a": 2, "b": 40}))
            results.append(await client.list_prompts())
            results.append(await client.get_prompt("simple-prompt"))
            results.append(await client.list_resources())
            results.append(await client.read_resource("demo://resource/static/document/architecture.md"))
            await client.send_ping()
    return [r.model_dump(mode="json") if hasattr(r, "model_dump") else r for r in results]


def _recorded(name: str) -> list[Record]:
    return list(read_recording(rendezvous.recordings(name)[-1]))


def _frames(records: list[Record], side: str) -> list[bytes]:
    return [r.data for r in records if r.side == side]


async def test_the_sdk_client_gets_the_same_results_and_every_frame_is_recorded_byte_for_byte() -> None:
    server = server_everything_cmd()
    direct = await _session(server)
    relayed = await _session(tap_cmd(*tap_cmd(*server, name="inner"), name="outer"))
    assert relayed == direct

    outer, inner = _recorded("outer"), _recorded("inner")
    # What the outer relay recorded the client writing is what the inner one saw arrive, and the
    # other way round: the relay changed no byte, and the records hold the frames as they crossed.
    assert _frames(outer, CLIENT) == _frames(inner, CLIENT)
    assert _frames(outer, SERVER) == _frames(inner, SERVER)
    sent = [json.loads(frame) for frame in _frames(outer, CLIENT)]
    assert [m.get("method") for m in sent if "method" in m] == [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "ping",
    ]
    answered = {m["id"] for m in map(json.loads, _frames(outer, SERVER)) if "id" in m and "method" not in m}
    assert {m["id"] for m in sent if "id" in m and "method" in m} <= answered
    for records in (outer, inner):
        assert records[0].side == EVENT and records[0].name == HELLO and records[-1].name == CLOSED
        assert [r.seq for r in records] == list(range(1, len(records) + 1))


def test_ping_round_trip_through_the_relay_against_direct(capsys: pytest.CaptureFixture[str]) -> None:
    """Measured and printed, not asserted: the machine's load decides the numbers."""
    import mcp_notebook

    server = server_everything_cmd()
    rounds, count = 10, 200
    times: dict[str, list[float]] = {"direct": [], "relay": []}
    with (
        mcp_notebook.connect(server, era="legacy", name="direct") as direct,
        mcp_notebook.connect(tap_cmd(*server, name="bench"), era="legacy", name="relay") as relayed,
    ):
        for conn in (direct, relayed):
            for _ in range(100):
                conn.ping()
        for _ in range(rounds):
            for key, conn in (("direct", direct), ("relay", relayed)):
                start = time.perf_counter()
                for _ in range(count):
                    conn.ping()
                times[key].append((time.perf_counter() - start) / count)
    with capsys.disabled():
        for how in (min, statistics.median):
            d, r = how(times["direct"]), how(times["relay"])
            what = f"ping round trip ({how.__name__} of {rounds}x{count})"
            sys.stdout.write(f"\n{what}: direct {d * 1e6:.0f} us, relay {r * 1e6:.0f} us, ratio {r / d:.2f}")
        sys.stdout.write("\n")
