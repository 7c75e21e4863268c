"""MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) as metadata: the extension we declare,
which tools have a view (`_meta.ui.resourceUri`, or the deprecated flat `ui/resourceUri`),
who may call a tool (`visibility`), and the Content-Security-Policy and permission policy
a view's iframe gets from its resource's `_meta.ui`. Pure functions: no I/O.

The policy is never looser than the spec's restrictive default: only origins the server
declared are added, each checked to be a plain origin (a scheme, a host, maybe a `*.`
subdomain wildcard and a port), so no declared value can smuggle a directive or a keyword.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
FLAT_KEY = "ui/resourceUri"
PROTOCOL_VERSION = "2026-01-26"
PERMISSIONS = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation", "clipboardWrite": "clipboard-write"}

_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?/?$")


def capability() -> dict[str, Any]:
    """What the client declares under `capabilities.extensions` when Apps are on."""
    return {EXTENSION: {"mimeTypes": [MIME]}}


def declare(capabilities: dict[str, Any]) -> dict[str, Any]:
    """`capabilities` with the Apps extension added (a copy; other extensions kept)."""
    declared = dict(capabilities)
    declared["extensions"] = {**(declared.get("extensions") or {}), **capability()}
    return declared


def ui_meta(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool's `_meta.ui`, the deprecated flat key folded in (as `resourceUri` when absent)."""
    meta = _dict(tool.get("_meta"))
    ui = dict(_dict(meta.get("ui")))
    flat = meta.get(FLAT_KEY)
    if not isinstance(ui.get("resourceUri"), str) and isinstance(flat, str):
        ui["resourceUri"] = flat
    return ui


def uses_flat_key(tool: dict[str, Any]) -> bool:
    """The tool names its view only with the deprecated `_meta["ui/resourceUri"]`."""
    meta = _dict(tool.get("_meta"))
    ui = _dict(meta.get("ui"))
    return isinstance(meta.get(FLAT_KEY), str) and not isinstance(ui.get("resourceUri"), str)


def resource_uri(tool: dict[str, Any]) -> str | None:
    """The `ui://` resource that renders the tool's results, if it has one."""
    uri = ui_meta(tool).get("resourceUri")
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def visibility(tool: dict[str, Any]) -> list[str]:
    """Who may call the tool: "model" (here: the user's code and magics) and/or "app"."""
    seen = ui_meta(tool).get("visibility")
    if isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        return list(seen)
    return ["model", "app"]


def app_only(tool: dict[str, Any]) -> bool:
    """Meant for its app alone (`visibility` without "model"): hidden from listings by default."""
    return "model" not in visibility(tool)


def callable_by_app(tool: dict[str, Any]) -> bool:
    return "app" in visibility(tool)


def origins(values: Any) -> list[str]:
    """The declared origins that are plain origins; anything else is dropped, never widened."""
    if not isinstance(values, list):
        return []
    return [value.rstrip("/") for value in values if isinstance(value, str) and _ORIGIN.match(value)]


def csp(declared: Any) -> str:
    """The view's Content-Security-Policy: the spec's restrictive default plus declared origins."""
    declared = declared if isinstance(declared, dict) else {}
    connect = origins(declared.get("connectDomains"))
    resources = origins(declared.get("resourceDomains"))
    frames = origins(declared.get("frameDomains"))
    bases = origins(declared.get("baseUriDomains"))
    extra = " ".join(resources)

    def with_extra(base: str) -> str:
        return f"{base} {extra}".rstrip()

    return "; ".join(
        [
            "default-src 'none'",
            with_extra("script-src 'self' 'unsafe-inline'"),
            with_extra("style-src 'self' 'unsafe-inline'"),
            with_extra("img-src 'self' data:"),
            *([f"font-src {extra}"] if extra else []),
            with_extra("media-src 'self' data:"),
            "connect-src " + (" ".join(connect) or "'none'"),
            "frame-src " + (" ".join(frames) or "'none'"),
            "base-uri " + (" ".join(bases) or "'self'"),
            "object-src 'none'",
            "form-action 'none'",
        ]
    )


def permissions(declared: Any) -> list[str]:
    """The permission-policy features a view asks for (granted only once the user agrees)."""
    if not isinstance(declared, dict):
        return []
    return [feature for key, feature in PERMISSIONS.items() if isinstance(declared.get(key), dict)]


def resource_meta(content: dict[str, Any], listed: dict[str, Any] | None) -> dict[str, Any]:
    """A view's `_meta.ui`: the content item's, else the `resources/list` entry's (draft spec)."""
    for source in (content, listed or {}):
        ui = _dict(_dict(source.get("_meta")).get("ui"))
        if ui:
            return dict(ui)
    return {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


_DOCTYPE = re.compile(r"^\ufeff?\s*<!doctype[^>]*>", re.IGNORECASE)


def with_csp(html: str, policy: str) -> str:
    """The view's HTML with its policy as the first thing parsed (a `<meta>` right after any
    doctype): nothing of the app runs before it, and a policy of the app's own only narrows it."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{escape(policy, quote=True)}">'
    doctype = _DOCTYPE.match(html)
    if doctype is None:
        return "<!DOCTYPE html>" + meta + html
    return html[: doctype.end()] + meta + html[doctype.end() :]
