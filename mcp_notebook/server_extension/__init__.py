"""The Jupyter server extension: the OAuth callback at `{base_url}mcp-notebook/oauth/callback`,
where the authorization server sends the user's browser back, in the user's own
authenticated session, to hand the response to the kernel waiting for it.

Enabled by `etc/jupyter/jupyter_server_config.d/mcp-notebook.json`, which the wheel installs.
Jupyter server loads it; nothing of the client imports it. It stands on `auth.handoff` alone,
the file protocol it shares with the kernel.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "mcp_notebook.server_extension"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .callback import load

    load(serverapp)
