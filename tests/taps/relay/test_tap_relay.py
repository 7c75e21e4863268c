"""The stdio relay with plain programs as the server (`cat` echoes bytes as they come): bytes
pass unchanged and every frame is recorded as it was; a notebook that never reads, attaches late
or goes away never slows or breaks the session; exit codes and signals end it as a client would;
secrets stay out of the records; the recording keeps its bound; mistakes are one line."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.tap_relay import ENV_DIR, StandInNotebook, short_tap_dir, tap_cmd
from support.waiting import wait_until

from mcp_notebook.taps.relay import main
from mcp_notebook.taps.relay.main import Relay
from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.recording import read_recording
from mcp_notebook.taps.wire.records import CLIENT, CLOSED, DROPPED, EVENT, EXIT, HELLO, SERVER, STDERR, Record

CAT = shutil.which("cat") or pytest.skip("no cat", allow_module_level=True)
WAIT = 30.0


@pytest.fixture(autouse=True)
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with short_tap_dir() as folder:
        monkeypatch.setenv(ENV_DIR, str(folder))
        yield folder


def start(*command: str, name: str = "t", options: tuple[str, ...] = (), **popen: object) -> subprocess.Popen[bytes]:
    argv = tap_cmd(*command, name=name)
    argv[3:3] = options  # after `-m mcp_notebook.tap`
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)  # type: ignore[call-overload]


def run(*command: str, data: bytes = b"", **kwargs: object) -> tuple[int, bytes, bytes]:
    relay = start(*command, **kwargs)  # type: ignore[arg-type]
    out, err = relay.communicate(data, timeout=WAIT)
    return relay.returncode, out, err


def recorded(name: str = "t") -> list[Record]:
    (newest,) = rendezvous.recordings(name)[-1:]
    return list(read_recording(newest))


def frames(records: list[Record], side: str) -> list[bytes]:
    return [r.data for r in records if r.side == side]


def events(records: list[Record], name: str) -> list[Record]:
    return [r for r in records if r.side == EVENT and r.name == name]


def python(code: str, *args: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code, *args)


# ---------------------------------------------------------------- bytes and frames


def test_bytes_pass_unchanged_and_each_frame_is_recorded_as_it_crossed() -> None:
    lines = [b'{"jsonrpc":"2.0","id":0,"method":"ping"}', b"", b'{"x":"\xff\xfe"}\r', b"y" * 300_000, b"no newline at the end"]
    data = b"\n".join(lines)
    code, out, _ = run(CAT, data=data)
    assert code == 0 and out == data
    records = recorded()
    assert frames(records, CLIENT) == lines
    assert frames(records, SERVER) == lines
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    hello = records[0]
    assert (hello.side, hello.name) == (EVENT, HELLO)
    assert hello.detail["name"] == "t" and hello.detail["transport"] == "stdio" and hello.detail["argv"] == [CAT]
    assert [r.name for r in records[-2:]] == [EXIT, CLOSED] and records[-2].detail["code"] == 0
    assert records[-3].detail.get("partial") is True


class _Handover:
    """A recorder standing in for the relay's: at each hand-off, whether the bytes were already
    readable on the far side (written on)."""

    def __init__(self, far_side: int) -> None:
        self.far_side = far_side
        self.seen: list[tuple[str, bytes, bool]] = []

    def put(self, side: str, data: bytes) -> None:
        self.seen.append((side, data, bool(select.select([self.far_side], [], [], 0)[0])))


@pytest.mark.parametrize("side", [SERVER, CLIENT])
def test_bytes_reach_the_recorder_before_they_are_written_on(side: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """So the records keep causal order across the two directions: a pong read on one side is
    handed over after the ping it answers was (the other order once marked a fast client's pong
    as answering nothing and its ping as unanswered)."""
    relay = Relay("t", [CAT], CAT, [], 2**20)
    source_read, source_write = os.pipe()
    far_read, far_write = os.pipe()
    relay.recorder = _Handover(far_read)  # type: ignore[assignment]
    os.write(source_write, b'{"jsonrpc":"2.0","id":"p-1","method":"ping"}\n')
    os.close(source_write)
    try:
        if side == SERVER:
            relay._pump(source_read, far_write, SERVER)
        else:
            read = os.read  # the client's direction reads our stdin, fd 0: here, the source pipe
            monkeypatch.setattr(main.os, "read", lambda fd, size: read(source_read if fd == 0 else fd, size))
            relay.process = subprocess.Popen([CAT], stdin=subprocess.PIPE)  # only its stdin is closed at the end
            relay._to_server(far_write)
            relay.process.wait(WAIT)
    finally:
        for fd in (source_read, far_read, far_write):
            os.close(fd)
    assert relay.recorder.seen == [(side, b'{"jsonrpc":"2.0","id":"p-1","method":"ping"}\n', False), (side, b"", True)]


def test_the_servers_stderr_passes_through_and_is_recorded_by_line() -> None:
    code, out, err = run(*python("import sys; sys.stderr.write('one\\ntwo\\n')"))
    assert code == 0 and out == b"" and err == b"one\ntwo\n"
    assert frames(recorded("t"), STDERR) == [b"one", b"two"]


def test_a_line_over_the_bound_is_relayed_whole_and_recorded_clipped() -> None:
    from mcp_notebook.taps.relay.recorder import CLIP_BYTES

    line = b"z" * (CLIP_BYTES + 1000)
    code, out, _ = run(CAT, data=line + b"\nafter\n")
    assert code == 0 and out == line + b"\nafter\n"
    client = [r for r in recorded() if r.side == CLIENT]
    assert client[0].data == line[:CLIP_BYTES] and client[0].detail == {"clipped": True, "size": len(line)}
    assert client[1].data == b"after"


def test_the_default_name_is_the_commands_basename() -> None:
    relay = subprocess.run([*tap_cmd(CAT)], input=b"x\n", capture_output=True, timeout=WAIT)
    assert relay.returncode == 0
    assert frames(recorded("cat"), CLIENT) == [b"x"]


# ---------------------------------------------------------------- the notebook


def test_a_notebook_that_never_reads_does_not_hold_up_the_session(tap_dir: Path) -> None:
    line = b"w" * 9_999
    data = (line + b"\n") * 600  # 6 MB each way: 12 MB of records, more than the feed's queue and the socket's buffer
    with StandInNotebook(rendezvous.socket_path("t", tap_dir), reading=False) as notebook:
        code, out, _ = run(CAT, data=data)
        assert notebook.connections == 1
    assert code == 0 and out == data
    records = recorded()
    dropped = events(records, DROPPED)
    assert dropped and all(d.detail["where"] == "notebook" for d in dropped)
    assert sum(d.detail["count"] for d in dropped) > 0
    assert all(d.detail["last"] - d.detail["first"] + 1 >= d.detail["count"] for d in dropped)
    assert len(frames(records, CLIENT)) == 600
    assert [r.name for r in records[-2:]] == [EXIT, CLOSED]


def test_a_notebook_attaching_mid_session_gets_records_from_then_on(tap_dir: Path) -> None:
    relay = start(CAT)
    assert relay.stdin is not None and relay.stdout is not None

    def echo(line: bytes) -> None:
        relay.stdin.write(line + b"\n")  # type: ignore[union-attr]
        relay.stdin.flush()  # type: ignore[union-attr]
        assert relay.stdout.readline() == line + b"\n"  # type: ignore[union-attr]

    try:
        echo(b"before")
        with StandInNotebook(rendezvous.socket_path("t", tap_dir)) as first:
            assert first.wait_for(lambda: first.records), "the relay never attached"
            echo(b"during")
            assert first.wait_for(lambda: frames(first.records, SERVER) == [b"during"])
            seen = list(first.records)
        echo(b"away")  # the notebook went: the session goes on
        with StandInNotebook(rendezvous.socket_path("t", tap_dir)) as second:
            assert second.wait_for(lambda: second.records), "the relay never attached again"
            echo(b"back")
            assert second.wait_for(lambda: frames(second.records, SERVER) == [b"back"])
            relay.stdin.close()
            assert relay.wait(WAIT) == 0
            assert second.wait_for(lambda: any(r.name == CLOSED for r in second.records))
    finally:
        relay.kill()
        relay.wait()
        relay.stdout.close()
        relay.stderr.close()  # type: ignore[union-attr]
    assert seen[0].name == HELLO and seen[0].seq == 1  # each connection starts with the session's HELLO
    assert frames(seen, CLIENT) == [b"during"]
    assert second.records[0].name == HELLO and frames(second.records, CLIENT) == [b"back"]
    assert [r.name for r in second.records[-2:]] == [EXIT, CLOSED]
    assert frames(recorded(), CLIENT) == [b"before", b"during", b"away", b"back"]  # the recording has it all
    assert seen[0].detail["recording"] == str(rendezvous.recordings("t")[-1])


# ---------------------------------------------------------------- the ending


@pytest.mark.parametrize(
    ("code", "expected"),
    [("import sys; sys.exit(7)", 7), ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM)],
)
def test_the_relay_exits_with_the_servers_code(code: str, expected: int) -> None:
    assert run(*python(code))[0] == expected
    assert events(recorded(), EXIT)[0].detail["code"] == expected


def _started(relay: subprocess.Popen[bytes]) -> int:
    """The server's pid, once the relay recorded its HELLO."""
    wait_until(lambda: rendezvous.recordings("t") and recorded(), "the relay's HELLO", WAIT)
    return int(recorded()[0].detail["pid"])


def _wait(relay: subprocess.Popen[bytes]) -> int:
    """The relay's exit code, its stdin left open (closing it would be the client hanging up)."""
    code = relay.wait(WAIT)
    for pipe in (relay.stdin, relay.stdout, relay.stderr):
        pipe.close()  # type: ignore[union-attr]
    return code


def _gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_ends_the_server_as_a_client_would(sig: signal.Signals) -> None:
    relay = start(CAT)
    server = _started(relay)
    relay.send_signal(sig)
    assert _wait(relay) == 0  # cat saw its stdin close and exited: no signal reached it
    assert _gone(server)
    assert events(recorded(), CLOSED)[0].detail["reason"] == f"the relay got {sig.name}"


def test_a_signal_to_the_clients_process_group_does_not_reach_the_server() -> None:
    relay = start(CAT, start_new_session=True)  # the relay leads a group, as under a client
    server = _started(relay)
    os.killpg(relay.pid, signal.SIGINT)
    assert _wait(relay) == 0  # cat, interrupted itself, would have made it 130
    assert _gone(server)


def test_a_server_that_ignores_its_stdin_closing_is_terminated() -> None:
    relay = start(*python("import time; time.sleep(60)"))
    server = _started(relay)
    relay.communicate(timeout=WAIT)  # closes the relay's stdin: the client hung up
    assert relay.returncode == 128 + signal.SIGTERM
    assert _gone(server)
    assert events(recorded(), CLOSED)[0].detail["reason"] == "the client hung up"


# ---------------------------------------------------------------- secrets and bounds


def test_secrets_from_the_environment_never_reach_the_records(tap_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token, other = "tok-3f9a8c7d6e5b", "pass/word\"with'quotes"
    monkeypatch.setenv("SERVICE_API_TOKEN", token)
    monkeypatch.setenv("PLAIN_LOOKING", other)
    code = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data); sys.stderr.write(sys.argv[1] + '\\n')"
    payload = json.dumps({"token": token, "other": other}).encode() + b"\n"
    with StandInNotebook(rendezvous.socket_path("t", tap_dir)) as notebook:
        exit_code, out, err = run(*python(code, token), data=payload, options=("--secret-env", "PLAIN_LOOKING"))
        assert notebook.wait_for(lambda: any(r.name == CLOSED for r in notebook.records))
    assert exit_code == 0 and out == payload and err == token.encode() + b"\n"  # relayed untouched
    saved = b"".join(p.read_bytes() for p in rendezvous.recordings("t")[-1].iterdir())
    streamed = json.dumps([[r.text, r.detail] for r in notebook.records]).encode()
    for secret in (token, other, json.dumps(other)[1:-1]):
        assert secret.encode() not in saved and secret.encode() not in streamed
    records = recorded()
    assert records[0].detail["argv"][-1] == "[redacted]"
    assert json.loads(frames(records, CLIENT)[0]) == {"token": "[redacted]", "other": "[redacted]"}


def test_the_recording_keeps_its_bound_on_a_long_session() -> None:
    lines = [b"%08d" % n + b"." * 200 for n in range(20_000)]  # ~4 MB each way
    data = b"\n".join(lines) + b"\n"
    code, out, _ = run(CAT, data=data, options=("--recording-mb", "0.25"))
    assert code == 0 and out == data
    folder = rendezvous.recordings("t")[-1]
    assert sum(p.stat().st_size for p in folder.iterdir()) <= 0.25 * 2**20
    records = recorded()
    assert frames(records, CLIENT)[0] == lines[0]  # the start
    assert frames(records, SERVER)[-1] == lines[-1]  # the newest (cat's echo of the last line comes last)
    (dropped,) = events(records, DROPPED)
    assert dropped.detail["where"] == "recording" and dropped.detail["count"] > 0


# ---------------------------------------------------------------- mistakes


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        ([], 2, "no server command"),
        (["--"], 2, "no server command"),
        (["--", "no-such-command-here"], 127, "command not found: no-such-command-here"),
        (["--name", "a b", "--", "cat"], 2, "not a tap name"),
    ],
)
def test_a_users_mistake_is_one_line(argv: list[str], code: int, said: str) -> None:
    relay = subprocess.run([sys.executable, "-m", "mcp_notebook.tap", *argv], capture_output=True, timeout=WAIT)
    assert relay.returncode == code
    assert said in relay.stderr.decode() and relay.stderr.decode().count("\n") == 1


def test_the_help_shows_a_config_entry() -> None:
    relay = subprocess.run([sys.executable, "-m", "mcp_notebook.tap", "--help"], capture_output=True, timeout=WAIT)
    assert relay.returncode == 0
    assert b'"args": ["-m", "mcp_notebook.tap", "--name"' in relay.stdout
