"""A session recorded from server-everything, shared by the replay and compare tests."""

from __future__ import annotations

from pathlib import Path

import mcp_notebook
from support.servers import server_everything_cmd

SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "a summary"}, "model": "test-model"}
FEATURES_MD = "demo://resource/static/document/features.md"
# What a session asks server-everything: tools, a sampling request and a roots/list (server
# requests, the first with id 0), resources, prompts.
ASKED = [
    ("tools/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
    ("tools/call", {"name": "trigger-sampling-request", "arguments": {"prompt": "hello", "maxTokens": 10}}),
    ("tools/call", {"name": "get-roots-list", "arguments": {}}),
    ("resources/list", {}),
    ("resources/read", {"uri": FEATURES_MD}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "args-prompt", "arguments": {"city": "Lyon"}}),
]


def sample(params):
    return SAMPLED


def ask_all(conn) -> list:
    return [conn.request(method, params) for method, params in ASKED]


def record_everything(folder: Path) -> tuple[Path, list]:
    """(a cassette of a session with server-everything, what that session got back)."""
    path = folder / "everything.jsonl"
    with mcp_notebook.connect(server_everything_cmd(), name="recorded", era="legacy", sampling=sample, roots=["/tmp"]) as conn:
        answers = ask_all(conn)
        conn.trace.to_jsonl(path)
    return path, answers
