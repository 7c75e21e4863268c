"""Cassettes replayed: a session recorded from server-everything plays back with no server
(Node off PATH), over stdio and HTTP, with its server requests, in both eras."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from support.recordings import ASKED, ask_all, record_everything, sample
from support.servers import sdk_server_cmd

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.cassette.player import Player
from mcp_notebook.cassette.tape import build

pytestmark = [pytest.mark.node]


@pytest.fixture(scope="module")
def everything(tmp_path_factory) -> tuple[Path, list]:
    return record_everything(tmp_path_factory.mktemp("cassettes"))


def test_the_cassette_says_what_it_is_on_its_first_line(everything):
    path, _ = everything
    header = json.loads(path.read_text().splitlines()[0])
    assert header["format"] == "mcp-notebook-trace" and header["formatVersion"] == 1
    assert header["protocolVersion"] == "2025-11-25" and header["era"] == "legacy"
    assert "[redacted]" in header["redaction"]
    assert len(mcp_notebook.load_trace(path)) == len(path.read_text().splitlines()) - 1


def test_a_cassette_from_server_everything_replays_with_node_off_path(everything, tmp_path):
    path, answers = everything
    script = textwrap.dedent(
        f"""
        import json, shutil, sys
        assert shutil.which("node") is None, "node is still on PATH"
        import mcp_notebook
        from support.recordings import ask_all, sample
        with mcp_notebook.replay({str(path)!r}, sampling=sample, roots=["/tmp"], load_magics=False) as conn:
            print(json.dumps([conn.protocol_version, conn.server_info, ask_all(conn)]))
        """
    )
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    version, server_info, replayed = json.loads(done.stdout.splitlines()[-1])
    assert version == "2025-11-25" and server_info["name"] == "mcp-servers/everything"
    assert replayed == answers
    assert "Echo: hi" in json.dumps(replayed[1]) and "a summary" in json.dumps(replayed[2])


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_replay_sends_the_recorded_server_requests_and_maps_ids(everything, transport):
    path, answers = everything
    asked: list = []

    def list_roots(params):
        asked.append(params)
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}

    with mcp_notebook.replay(path, transport=transport, sampling=sample, handlers={"roots/list": list_roots}) as conn:
        conn.request("ping")  # not recorded: a keepalive's ping is answered all the same
        assert ask_all(conn) == answers
        server_requests = conn.trace.filter(direction="in", kind="request")
        assert [e.method for e in server_requests] == ["sampling/createMessage", "roots/list"]
        assert server_requests[0].id == 0  # the replay's own ids, from 0: a falsy id is an id
        answered = conn.trace.filter(direction="out", kind="response", id=0)
        assert answered and answered[0].message["result"]["model"] == "test-model"
        assert asked, "the recorded roots/list reached the client's handler"
        ours = [e.id for e in conn.trace.filter(direction="out", kind="request", method="tools/call")]
        replies = [e.id for e in conn.trace.filter(direction="in", kind="response", method="tools/call")]
        assert ours == replies


def test_an_unmatched_request_gets_an_error_naming_the_closest_recording(everything):
    path, _ = everything
    with mcp_notebook.replay(path, sampling=sample, roots=["/tmp"]) as conn:
        with pytest.raises(mcp_notebook.McpError) as raised:
            conn.request("tools/call", {"name": "echo", "arguments": {"message": "ho"}})
        assert raised.value.code == -32602
        assert 'closest recorded request is tools/call {"arguments": {"message": "hi"}, "name": "echo"}' in str(raised.value)
        assert raised.value.data["closest"] == {"method": "tools/call", "params": ASKED[1][1]}
        with pytest.raises(mcp_notebook.McpError) as raised:
            conn.request("resources/templates/list")
        assert raised.value.code == -32601 and "no resources/templates/list request was recorded" in str(raised.value)


def test_match_by_method_and_in_order(tmp_path):
    path = tmp_path / "sdk.jsonl"
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        for text in ("first", "second"):
            conn.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        conn.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        conn.trace.to_jsonl(path)

    def text(result) -> str:
        return result["content"][0]["text"]

    with mcp_notebook.replay(path, match="method") as conn:
        echoed = [text(conn.request("tools/call", {"name": "any", "arguments": {}})) for _ in range(4)]
        assert echoed == ["first", "second", "3", "3"]  # the next recording of the method; the last again at the end
    with mcp_notebook.replay(path, match="order") as conn:
        assert text(conn.request("tools/call", {"name": "echo", "arguments": {"text": "whatever"}})) == "first"
        with pytest.raises(mcp_notebook.McpError, match="the next recorded request is tools/call, not tools/list"):
            conn.request("tools/list")


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_modern_cassette_replays_statelessly(tmp_path, transport):
    path = tmp_path / "modern.jsonl"
    with mcp_notebook.connect(demo_server.command("stdio", "modern"), era="modern", name="modern") as conn:
        added = conn.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        listed = conn.request("tools/list")
        conn.trace.to_jsonl(path)
    assert json.loads(path.read_text().splitlines()[0])["era"] == "modern"
    with mcp_notebook.replay(path, transport=transport) as conn:
        assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
        assert conn.request("tools/list") == listed
        assert conn.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}) == added
        with pytest.raises(mcp_notebook.McpError) as raised:
            conn.request("resources/templates/list")
        assert raised.value.code == -32601 and "no resources/templates/list request was recorded" in str(raised.value)


def test_secrets_never_reach_a_cassette(tmp_path):
    secret = "sk-replay-0123456789"
    path = tmp_path / "secret.jsonl"
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk", secrets=[secret]) as conn:
        conn.request("tools/call", {"name": "echo", "arguments": {"text": f"key {secret}"}})
        conn.trace.to_jsonl(path)
    assert secret not in path.read_text()
    with mcp_notebook.replay(path, match="method") as conn:
        result = conn.request("tools/call", {"name": "echo", "arguments": {"text": "?"}})
    assert result["content"][0]["text"] == "key [redacted]"


def test_a_file_that_is_not_a_cassette_is_refused(tmp_path):
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(mcp_notebook.UsageError, match="line 1: not a trace record"):
        mcp_notebook.replay(tmp_path / "notes.jsonl")
    with pytest.raises(mcp_notebook.UsageError, match="cannot read the cassette"):
        mcp_notebook.replay(tmp_path / "missing.jsonl")


def test_a_refused_cassette_is_named_without_escape_sequences_and_bad_bytes_are_one_line(tmp_path):
    """A cassette's name (a file from anywhere) is shown plain; a line that is not UTF-8 is
    refused as not JSON, naming the line (it escaped as a UnicodeDecodeError, name and all)."""
    bad = tmp_path / "rec\x1b]52;c;aGk=\x07\x1b[2J.jsonl"
    bad.write_bytes(b'{"direction": "in"}\n\xff\xfe\n')
    with pytest.raises(mcp_notebook.UsageError) as caught:
        mcp_notebook.replay(bad)
    assert (
        str(caught.value)
        == f"{tmp_path}/rec.jsonl, line 2: not JSON ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"
    )
    with pytest.raises(mcp_notebook.UsageError) as caught:
        mcp_notebook.replay(tmp_path / "gone\x1b[2J.jsonl")
    assert str(caught.value) == f"cannot read the cassette {tmp_path}/gone.jsonl: No such file or directory"


def test_the_replay_sends_every_frame_where_the_server_sent_it(tmp_path):
    """Progress, log lines and resource updates come between a request and its reply, as recorded."""

    def session(conn) -> list:
        conn.request("resources/subscribe", {"uri": "demo://counter"})
        conn.request("tools/call", {"name": "bump", "arguments": {"by": 2}})
        conn.request("tools/call", {"name": "log", "arguments": {"message": "hi", "level": "info"}})
        conn.call_tool("slow", {"seconds": 0.1, "steps": 2})
        return [(e.direction, e.kind, e.method) for e in conn.trace.frames() if e.method != "ping"]

    path = tmp_path / "demo.jsonl"
    with mcp_notebook.connect(demo_server.command("stdio", "legacy"), era="legacy", name="recorded") as conn:
        recorded = session(conn)
        conn.trace.to_jsonl(path)
    with mcp_notebook.replay(path) as conn:
        replayed = session(conn)
    assert ("in", "notification", "notifications/progress") in recorded
    assert replayed == recorded


def test_frames_after_a_reply_are_played_after_it():
    """A notification the server sent after a reply (a scripted recording: the real peers here
    send theirs before) goes out after the replayed reply, on the channel outside any request."""
    rows = [
        {"direction": "out", "message": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "touch"}}},
        {"direction": "in", "message": {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}},
        {"direction": "in", "message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
        {"direction": "out", "message": {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}},
    ]
    tape = build({"era": "legacy"}, rows)
    assert [len(tape.exchanges[0].during), len(tape.exchanges[0].after)] == [0, 1]
    sent: list = []

    class Out:
        async def send(self, message):
            sent.append(("during", message))

        async def finish(self, reply):
            sent.append(("reply", reply))

    async def push(message):
        sent.append(("after", message))

    request = {"jsonrpc": "2.0", "id": "live-1", "method": "tools/call", "params": {"name": "touch"}}
    anyio.run(Player(tape).request, request, Out(), push)
    assert [(where, m.get("id", m.get("method"))) for where, m in sent] == [
        ("reply", "live-1"),
        ("after", "notifications/tools/list_changed"),
    ]


def test_importing_the_program_never_hides_the_function():
    """`python -m mcp_notebook.replay` is a module; imported (as a test that walks the package
    does), it stands aside for the function `mcp_notebook.replay`."""
    import importlib

    from mcp_notebook.api.cassettes.replay import replay

    assert importlib.import_module("mcp_notebook.replay") is replay
    assert mcp_notebook.replay is replay


def test_a_filtered_save_still_names_the_sessions_version(tmp_path):
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        conn.ping()
        assert conn.trace.to_jsonl(tmp_path / "pings.jsonl", method="ping") == 2
    assert json.loads((tmp_path / "pings.jsonl").read_text().splitlines()[0])["protocolVersion"] == "2025-11-25"
