"""ClientFrameRules: a client's frames against the negotiated version's schema, its answers to
server requests against their result types, and the server's declared capabilities; every
violation names the client's side. The server's rules keep their side."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.protocol import jsonrpc as rpc
from mcp_notebook.protocol.client_rules import ClientFrameRules
from mcp_notebook.protocol.frame_rules import FrameRules, Seen, Violation

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def seen(message: Any, version: str | None, *, method: str | None = None, params: Any = None, matched: bool = True,
         server_capabilities: Any = None, client_capabilities: Any = None) -> Seen:  # fmt: skip
    frame = rpc.classify(message)
    return Seen(1, frame.kind, message, version, method or frame.method, params, matched, frame.problem,
                server_capabilities, client_capabilities, True, "client")  # fmt: skip


def check(*args: Any, **kwargs: Any) -> list[Violation]:
    return ClientFrameRules().check(seen(*args, **kwargs))


@pytest.mark.parametrize("version", LEGACY)
def test_a_well_formed_client_session_breaks_nothing_in_each_legacy_version(version):
    capabilities = {"tools": {}, "resources": {"subscribe": True}, "logging": {}, "completions": {}}
    frames = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "demo://a"}},
        {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "info"}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ]  # fmt: skip
    rules = ClientFrameRules()
    assert [v for frame in frames for v in rules.check(seen(frame, version, server_capabilities=capabilities))] == []


def test_a_request_breaking_its_methods_definition_is_the_clients_schema_violation():
    (found,) = check({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {}}, "2025-11-25")
    assert (found.side, found.direction, found.rule, found.method) == ("client", "out", "schema", "resources/read")
    assert "'uri' is a required property" in found.message
    assert found.url == "https://modelcontextprotocol.io/specification/2025-11-25/server/resources"


def test_a_modern_request_without_its_meta_breaks_the_2026_schema():
    (found,) = check({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, "2026-07-28")
    assert (found.side, found.rule) == ("client", "schema") and "_meta" in found.message


def test_answers_to_server_requests_are_held_to_their_result_types():
    sampled = {"role": "assistant", "content": {"type": "text", "text": "a summary"}, "model": "m"}
    good = {"jsonrpc": "2.0", "id": 0, "result": sampled}
    assert check(good, "2025-11-25", method="sampling/createMessage") == []
    bad = {"jsonrpc": "2.0", "id": 0, "result": {"content": {"type": "text", "text": "x"}}}
    (found,) = check(bad, "2025-11-25", method="sampling/createMessage")
    assert (found.rule, found.where, found.method) == ("result-shape", "/result", "sampling/createMessage")
    assert "CreateMessageResult" in found.message
    (found,) = check({"jsonrpc": "2.0", "id": 5, "result": {"action": "maybe"}}, "2025-06-18", method="elicitation/create")
    assert found.rule == "result-shape" and "ElicitResult" in found.message
    assert (
        check({"jsonrpc": "2.0", "id": 6, "result": {"roots": [{"uri": "file:///tmp"}]}}, "2024-11-05", method="roots/list") == []
    )


def test_an_answer_to_no_server_request_is_unmatched():
    (found,) = check({"jsonrpc": "2.0", "id": 9, "result": {}}, "2025-11-25", matched=False)
    assert (found.side, found.rule, found.where) == ("client", "unmatched-response", "/id")
    assert "no request of the server's" in found.message


@pytest.mark.parametrize(
    ("method", "params", "declared", "needed"),
    [
        ("resources/subscribe", {"uri": "demo://a"}, {"resources": {}}, "resources.subscribe"),
        ("logging/setLevel", {"level": "info"}, {"tools": {}}, "logging"),
        ("tools/list", None, {"resources": {}}, "tools"),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "b"}},
         {"prompts": {}}, "completions"),
    ],
)  # fmt: skip
def test_a_request_the_servers_capabilities_do_not_cover_is_the_clients(method, params, declared, needed):
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    (found,) = check(message, "2025-11-25", server_capabilities=declared)
    assert (found.side, found.rule, found.where) == ("client", "capability", "/method")
    assert f"capabilities.{needed}" in found.message


def test_capabilities_are_judged_only_once_known_and_only_where_the_version_has_them():
    subscribe = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "demo://a"}}
    assert check(subscribe, "2025-11-25", server_capabilities=None) == []  # before the handshake's answer
    complete = {"jsonrpc": "2.0", "id": 2, "method": "completion/complete",
                "params": {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "b"}}}  # fmt: skip
    assert check(complete, "2024-11-05", server_capabilities={"prompts": {}}) == []  # no completions capability then


def test_roots_list_changed_from_a_client_that_did_not_declare_it():
    note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    (found,) = check(note, "2025-11-25", client_capabilities={"roots": {}})
    assert found.rule == "capability" and "roots.listChanged" in found.message
    assert check(note, "2025-11-25", client_capabilities={"roots": {"listChanged": True}}) == []


def test_the_servers_rules_keep_their_side_and_a_violation_says_its_side():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"tools": "none"}}
    frame = rpc.classify(message)
    (found,) = FrameRules().check(Seen(3, frame.kind, message, "2025-11-25", "tools/list"))
    assert (found.side, found.direction) == ("server", "in")
    assert str(found).startswith("#3 server tools/list /result/tools: result-shape:")
    assert Violation(1, "in", None, "", "schema", "m").side == "server"  # existing callers are unchanged
