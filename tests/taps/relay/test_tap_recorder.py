"""The recorder on its own: which environment values count as secrets, and bytes it could not
take (its backlog full) dropped with a count, the frames around them kept whole."""

from __future__ import annotations

from pathlib import Path

from mcp_notebook.taps.relay.recorder import Recorder, Scrubber, argv_secrets, env_secrets
from mcp_notebook.taps.wire.recording import Recording, read_recording
from mcp_notebook.taps.wire.records import CLIENT, DROPPED, EVENT, HELLO


def test_credential_looking_variables_are_secrets() -> None:
    env = {"GITHUB_TOKEN": "ghp_abcdef", "API_KEY": "k-123456", "DB_PASSWORD": "hunter22", "AUTH_ENABLED": "true"}
    env |= {"SHORT_TOKEN": "abc", "HOME": "/home/someone", "CUSTOM": "custom-value"}
    assert sorted(env_secrets(env, ["CUSTOM"])) == ["custom-value", "ghp_abcdef", "hunter22", "k-123456"]


def test_values_of_credential_looking_options_are_secrets() -> None:
    argv = ["server", "--api-key", "k-123456", "--token=t-abcdef", "--verbose", "--secret", "-x", "--port", "8080"]
    assert argv_secrets(argv) == ["k-123456", "t-abcdef"]


def test_the_scrubber_finds_secrets_raw_and_json_escaped() -> None:
    scrub = Scrubber(['pa"ss/word', "tok-1234", "abc"])
    assert scrub(b'{"a":"pa\\"ss/word","b":"xtok-1234x","c":"abc"}') == b'{"a":"[redacted]","b":"x[redacted]x","c":"abc"}'


def test_bytes_past_the_backlog_are_dropped_with_a_count_and_the_next_frames_kept(tmp_path: Path) -> None:
    recording = Recording(tmp_path / "r")
    recorder = Recorder(
        name="t", session="s", argv=["x"], pid=1, scrub=Scrubber([]), recording=recording, feed=None, backlog_bytes=100
    )
    recorder.put(CLIENT, b"a" * 60 + b"\n")  # taken
    recorder.put(CLIENT, b"b" * 60 + b"\n")  # past the backlog (the thread has not started): dropped
    recorder.put(CLIENT, b"c\nd")
    recorder.put(CLIENT, b"d" * 90)  # dropped, in the middle of a line
    recorder.put(CLIENT, b"d\ne\n")  # ...whose end is not a frame
    recorder.put(CLIENT, b"")
    recorder.start()
    recorder.close(timeout=10)
    records = list(read_recording(tmp_path / "r"))
    assert records[0].name == HELLO
    assert [(r.side, r.data if r.side == CLIENT else r.detail) for r in records[1:]] == [
        (CLIENT, b"a" * 60),
        (EVENT, {"bytes": 61, "side": CLIENT, "where": "recorder"}),
        (CLIENT, b"c"),
        (EVENT, {"bytes": 90, "side": CLIENT, "where": "recorder"}),
        (CLIENT, b"e"),
    ]
    assert all(r.name == DROPPED for r in records[1:] if r.side == EVENT)
