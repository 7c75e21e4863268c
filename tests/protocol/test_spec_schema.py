"""The MCP schemas the package ships are the spec's own, and compile in both eras."""

from __future__ import annotations

import json

import pytest
from support.schema import spec_dir

from mcp_notebook.protocol import spec_schema


@pytest.mark.parametrize("version", spec_schema.VERSIONS)
def test_the_shipped_schema_is_the_spec_s(version: str) -> None:
    shipped = json.loads(spec_schema.schema_path(version).read_text(encoding="utf-8"))
    shared = json.loads((spec_dir() / version / "schema.json").read_text(encoding="utf-8"))
    assert shipped == shared


def test_every_spec_version_is_shipped() -> None:
    assert sorted(p.name for p in spec_dir().iterdir() if (p / "schema.json").is_file()) == list(spec_schema.VERSIONS)
    assert (spec_schema.SCHEMA_DIR / "LICENSE").read_text() == (spec_dir() / "LICENSE").read_text()


@pytest.mark.parametrize("version", spec_schema.VERSIONS)
def test_results_of_every_client_request_are_found(version: str) -> None:
    methods = spec_schema.union_members(version, "ClientRequest")
    assert methods
    for method in methods:
        assert spec_schema.result_definition(version, method) is not None, method


def test_a_validator_is_compiled_once_per_version_and_definition() -> None:
    first = spec_schema.validator("2025-06-18", "CallToolResult")
    assert spec_schema.validator("2025-06-18", "CallToolResult") is first
    assert spec_schema.validator("2025-11-25", "CallToolResult") is not first


@pytest.mark.parametrize("version", spec_schema.VERSIONS)
def test_a_result_type_that_covers_the_envelope_s_result_is_as_strict(version: str) -> None:
    """Where the checker skips the envelope, a result the envelope refuses is refused anyway."""
    broken = {"_meta": "not an object"}
    for method in spec_schema.union_members(version, "ClientRequest"):
        name = spec_schema.result_definition(version, method)
        assert name is not None
        if spec_schema.covers_result(version, name):
            assert spec_schema.errors(broken, version, name), (method, name)
            assert spec_schema.errors(
                {"result": broken, "jsonrpc": "2.0", "id": 1}, version, spec_schema.response_definitions(version)[0]
            )
    assert not spec_schema.covers_result("2025-11-25", "GetTaskResult")  # allOf: checked with its envelope
