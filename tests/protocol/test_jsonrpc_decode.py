"""Decoding never raises, whatever the frame: each way a frame can be wrong comes back as an
invalid frame saying why, and the id of a response that did not parse is read from its text."""

from __future__ import annotations

import pytest

from mcp_notebook.protocol import jsonrpc as rpc

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"jsonrpc":"2.0","id":1,"result":' + DEEP + "}", rpc.TOO_DEEP),
        ('{"a":' * 50_000 + "1" + "}" * 50_000, rpc.TOO_DEEP),
        ('{"jsonrpc":"2.0","id":1,"result":"a\x00b"}', "invalid JSON: Invalid control character at: line 1 column 36 (char 35)"),
        ('{"jsonrpc":"2.0","id":1', "invalid JSON: Expecting ',' delimiter: line 1 column 24 (char 23)"),
    ],
)
def test_a_frame_that_does_not_parse_is_invalid_and_says_why(text, problem):
    frame = rpc.decode(text)
    assert (frame.kind, frame.message, frame.problem) == (rpc.INVALID, None, problem)


def test_a_problem_the_transport_found_makes_a_well_formed_frame_invalid_and_keeps_its_message():
    frame = rpc.decode('{"jsonrpc":"2.0","id":4,"result":{}}', problem="not UTF-8: invalid start byte at byte 9")
    assert (frame.kind, frame.problem, frame.answers) == (rpc.INVALID, "not UTF-8: invalid start byte at byte 9", 4)


@pytest.mark.parametrize(
    ("text", "request_id"),
    [
        ('{"jsonrpc":"2.0","id":7,"result":' + DEEP + "}", 7),
        ('{"jsonrpc":"2.0","result":' + DEEP + ',"id":"late"}', "late"),
        ('{ "result" : {"id": 1, "text": "\\"id\\": 2, [{"}, "id" : 3 , "x":\x00}', 3),
        ('{"id":"a\\"b","result":[', 'a"b'),
        ('{"jsonrpc":"2.0","id":5,"method":"ping","params":' + DEEP + "}", None),  # the server's request
        ('{"jsonrpc":"2.0","result":{"id":5}}\x00', None),  # an id, but not the frame's own
        ('{"id":1.5,"result":[}', None),
        ('{"id":true,"result":[}', None),
        ('[{"id":1,"result":[}]', None),
        ("not json at all", None),
    ],
)
def test_the_id_of_a_broken_frame_is_read_from_its_text_when_it_is_the_frames_own(text, request_id):
    assert rpc.id_in_text(text) == request_id
