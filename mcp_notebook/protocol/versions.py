"""Protocol versions and the rules that differ between them."""

from __future__ import annotations

MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_LEGACY = LEGACY_VERSIONS[0]

LEGACY_ERA, MODERN_ERA = "legacy", "modern"  # the eras' names (the session's `era.Era` strategies carry them)


def accepts_batches(version: str | None) -> bool:
    """Only 2025-03-26 has JSON-RPC batches; 2025-06-18 removed them again."""
    return version == "2025-03-26"
