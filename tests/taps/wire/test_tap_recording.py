"""The bounded recording of a relayed session: the start and the newest kept, the middle dropped
with a DROPPED event saying how many, the total within its bound, old sessions pruned, and a
reader that tolerates a torn last line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_notebook.taps.wire import recording
from mcp_notebook.taps.wire.records import CLIENT, DROPPED, EVENT, Record, encode


def _line(seq: int, size: int = 100) -> bytes:
    return encode(Record(seq, CLIENT, float(seq), float(seq), b"x" * size))


def _sizes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def test_a_short_session_is_kept_whole(tmp_path: Path) -> None:
    rec = recording.Recording(tmp_path / "s")
    for seq in range(1, 51):
        rec.write(_line(seq))
    rec.flush()
    assert [r.seq for r in recording.read_recording(tmp_path / "s")] == list(range(1, 51))
    rec.close()


def test_a_long_session_keeps_its_start_and_its_newest_within_the_bound(tmp_path: Path) -> None:
    head, segment, total = 10_000, 5_000, 40_000
    rec = recording.Recording(tmp_path / "s", head_bytes=head, segment_bytes=segment, total_bytes=total)
    count = 5_000  # ~ 750 kB written
    for seq in range(1, count + 1):
        rec.write(_line(seq))
        assert _sizes(tmp_path / "s") <= total + 256 * 1024  # (what the file buffers has not reached disk)
    rec.close()
    assert _sizes(tmp_path / "s") <= total
    records = list(recording.read_recording(tmp_path / "s"))
    seqs = [r.seq for r in records if r.side == CLIENT]
    assert seqs[0] == 1 and seqs[-1] == count  # the start and the newest
    dropped = [r for r in records if r.side == EVENT and r.name == DROPPED]
    assert len(dropped) == 1
    assert dropped[0].detail["count"] == count - len(seqs)
    start = [s for s in seqs if s < dropped[0].detail["first"]]
    assert sum(len(_line(s)) for s in start) <= head
    assert seqs == sorted(seqs) and seqs[len(start)] == dropped[0].detail["last"] + 1


def test_a_torn_last_line_and_garbage_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / recording.HEAD).write_bytes(_line(1) + b"not json\n" + _line(2) + _line(3)[:20])
    assert [r.seq for r in recording.read_recording(folder)] == [1, 2]


def test_a_missing_recording_reads_as_empty(tmp_path: Path) -> None:
    assert list(recording.read_recording(tmp_path / "gone")) == []


def test_starting_a_recording_prunes_the_oldest_sessions(tmp_path: Path) -> None:
    parent = tmp_path / "name"
    parent.mkdir()
    for stamp in range(1, 8):
        recording.start(parent, f"s{stamp}", stamp, keep=3).close()
    left = sorted(p.name for p in parent.iterdir())
    assert len(left) == 3 and left[-1].endswith("-s7") and left[0].endswith("-s5")


def test_files_are_private(tmp_path: Path) -> None:
    rec = recording.Recording(tmp_path / "s")
    rec.close()
    assert (tmp_path / "s").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "s" / recording.HEAD).stat().st_mode & 0o777 == 0o600


def test_bounds_that_cannot_hold_a_ring_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="two segments"):
        recording.Recording(tmp_path / "s", head_bytes=100, segment_bytes=100, total_bytes=250)
