"""The MCP schemas the package ships are the spec's own, and compile in both eras."""

from __future__ import annotations

import json

import pytest
from schema import spec_dir

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
