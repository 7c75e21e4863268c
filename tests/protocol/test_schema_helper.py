"""Tests of the test helper tests/support/schema.py itself (no package code involved)."""

from __future__ import annotations

import copy

import pytest
from support.schema import VERSIONS, method_definition, spec_dir, validate_client_frame

LEGACY = [v for v in VERSIONS if v != "2026-07-28"]
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def initialize(version: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcp-notebook-tests", "version": "0.1.0"},
        },
    }


def test_spec_dir_has_every_version():
    for version in VERSIONS:
        assert (spec_dir() / version / "schema.json").is_file(), version


def test_spec_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="MCP_SPEC_DIR"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "2025-11-25")


@pytest.mark.parametrize("version", LEGACY)
def test_legacy_handshake_and_ping_are_valid(version):
    validate_client_frame(initialize(version), version)
    validate_client_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}, version)
    validate_client_frame({"jsonrpc": "2.0", "id": 2, "method": "ping"}, version)
    validate_client_frame({"jsonrpc": "2.0", "id": "abc", "method": "ping", "params": {}}, version)
    validate_client_frame({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, version)
    validate_client_frame(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}},
        version,
    )
    validate_client_frame(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4, "reason": "user"}},
        version,
    )


@pytest.mark.parametrize("version", LEGACY)
def test_ping_params_are_open(version):
    # Every handshake-era schema types ping params as an open object
    # (only `_meta` is described), so extra keys are allowed.
    validate_client_frame({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": 1}}, version)


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_without_client_info_fails(version):
    frame = initialize(version)
    del frame["params"]["clientInfo"]
    with pytest.raises(AssertionError, match=r"InitializeRequest.*\n.*'clientInfo' is a required property"):
        validate_client_frame(frame, version)


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_without_params_fails(version):
    frame = initialize(version)
    del frame["params"]
    with pytest.raises(AssertionError, match="params"):
        validate_client_frame(frame, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_tools_call_without_name_fails(version):
    frame = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}}
    if version == MODERN:
        frame["params"]["_meta"] = MODERN_META
    with pytest.raises(AssertionError, match="'name' is a required property"):
        validate_client_frame(frame, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_envelope_errors(version):
    with pytest.raises(AssertionError, match="jsonrpc"):
        validate_client_frame({"id": 1, "method": "tools/list"}, version)
    with pytest.raises(AssertionError, match="exactly one"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1}, version)
    with pytest.raises(AssertionError, match="exactly one"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}, version)
    with pytest.raises(AssertionError, match="JSON object"):
        validate_client_frame("ping", version)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", LEGACY)
def test_server_only_or_unknown_methods_fail(version):
    with pytest.raises(AssertionError, match="not a client-to-server request"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}, version)
    with pytest.raises(AssertionError, match="not a client-to-server request"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "method": "tools/lst"}, version)
    with pytest.raises(AssertionError, match="not a client-to-server notification"):
        validate_client_frame({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, version)


@pytest.mark.parametrize("version", LEGACY)
def test_request_without_id_is_a_notification(version):
    with pytest.raises(AssertionError, match="not a client-to-server notification"):
        validate_client_frame({"jsonrpc": "2.0", "method": "ping"}, version)


@pytest.mark.parametrize("version", LEGACY)
def test_pong_and_error_responses(version):
    validate_client_frame({"jsonrpc": "2.0", "id": 5, "result": {}}, version)
    validate_client_frame({"jsonrpc": "2.0", "id": 5, "result": {}}, version, answers_method="ping")
    validate_client_frame({"jsonrpc": "2.0", "id": "s-1", "result": {"_meta": {}}}, version, answers_method="ping")
    validate_client_frame(
        {"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}},
        version,
        answers_method="sampling/createMessage",
    )
    with pytest.raises(AssertionError, match="code"):
        validate_client_frame({"jsonrpc": "2.0", "id": 0, "error": {"message": "no code"}}, version)
    with pytest.raises(AssertionError, match="without 'id'"):
        validate_client_frame({"jsonrpc": "2.0", "result": {}}, version)
    with pytest.raises(AssertionError, match="result"):
        validate_client_frame({"jsonrpc": "2.0", "id": 5, "result": []}, version, answers_method="ping")


@pytest.mark.parametrize("version", LEGACY)
def test_roots_list_result(version):
    ok = {"jsonrpc": "2.0", "id": 0, "result": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}}
    validate_client_frame(ok, version, answers_method="roots/list")
    bad = copy.deepcopy(ok)
    bad["result"] = {}
    with pytest.raises(AssertionError, match=r"ListRootsResult.*\n.*'roots' is a required property"):
        validate_client_frame(bad, version, answers_method="roots/list")
    with pytest.raises(AssertionError, match="not a server-to-client request"):
        validate_client_frame(ok, version, answers_method="tools/list")


def test_batches_only_in_2025_03_26():
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    validate_client_frame(batch, "2025-03-26")
    for version in ("2024-11-05", "2025-06-18", "2025-11-25"):
        with pytest.raises(AssertionError, match="batches are not allowed"):
            validate_client_frame(batch, version)


def test_modern_era_rejects_handshake_and_ping():
    with pytest.raises(AssertionError, match="'initialize' is not a client-to-server request"):
        validate_client_frame(initialize(MODERN), MODERN)
    with pytest.raises(AssertionError, match="'ping' is not a client-to-server request"):
        validate_client_frame({"jsonrpc": "2.0", "id": 2, "method": "ping"}, MODERN)
    with pytest.raises(AssertionError, match="notifications/initialized"):
        validate_client_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}, MODERN)
    with pytest.raises(AssertionError, match="not a server-to-client request"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}, MODERN, "ping")


def test_modern_era_requests_need_the_meta_envelope():
    validate_client_frame({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}, MODERN)
    validate_client_frame({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}}, MODERN)
    with pytest.raises(AssertionError, match="'_meta' is a required property"):
        validate_client_frame({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}, MODERN)
    # The 2026-07-28 ClientNotification union collapses to its one member.
    validate_client_frame({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}, MODERN)
    assert method_definition(MODERN, "notifications/cancelled", "ClientNotification") == "CancelledNotification"
    # Results carry resultType from 2026-07-28 on.
    with pytest.raises(AssertionError, match="resultType"):
        validate_client_frame({"jsonrpc": "2.0", "id": 1, "result": {}}, MODERN)


def test_method_definitions_are_found_per_version():
    assert method_definition("2024-11-05", "initialize", "ClientRequest") == "InitializeRequest"
    assert method_definition("2025-11-25", "tools/call", "ClientRequest") == "CallToolRequest"
    assert method_definition("2025-11-25", "ping", "ServerRequest") == "PingRequest"
    assert method_definition("2025-06-18", "elicitation/create", "ServerRequest") == "ElicitRequest"
    assert method_definition("2025-03-26", "elicitation/create", "ServerRequest") is None
    assert method_definition(MODERN, "ping", "ClientRequest") is None
