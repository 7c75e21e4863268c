"""Where the browser is sent back to after authorizing, and what waits for it there.

A kernel (or a terminal) started by a Jupyter server with the mcp-notebook extension uses
that server's callback, `{public origin}{base_url}mcp-notebook/oauth/callback`, which the
user's browser reaches wherever the kernel runs: the server must have announced itself
(`handoff.announce`) and be this process's parent or grandparent, and its public origin is
known from the setting (`OAuth(public_url=...)`, `%config McpNotebook.public_url`), else
JupyterHub's `JUPYTERHUB_PUBLIC_URL` / `JUPYTERHUB_PUBLIC_HUB_URL` with
`JUPYTERHUB_SERVICE_PREFIX`, else (outside a hub) the server's own URL. Otherwise the
loopback redirect stands, caught where the browser shares the kernel's machine, pasted where
it does not. Only the origin of a public URL is used: the path is the server's.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import parse_qs, urlsplit

from .handoff import CALLBACK_PATH, Pending, announced
from .loopback import LoopbackReceiver, Receiver


def _origin(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _ancestors() -> list[int]:
    """This process's parent and grandparent (a terminal's shell stands between)."""
    parent = os.getppid()
    found = [parent]
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{parent}/stat") as file:
                found.append(int(file.read().rsplit(")", 1)[1].split()[1]))
        except (OSError, ValueError, IndexError):
            pass
    return found


def jupyter_callback(public_url: str | None = None) -> str | None:
    """The Jupyter server's callback URL as the user's browser reaches it, or None."""
    server = announced(_ancestors())
    if server is None:
        return None
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX")
    origin = (
        _origin(public_url)
        or _origin(os.environ.get("JUPYTERHUB_PUBLIC_URL"))
        or _origin(os.environ.get("JUPYTERHUB_PUBLIC_HUB_URL"))
        or (None if prefix is not None else _origin(server.get("url")))
    )
    if origin is None:
        return None  # a hub that does not say its public URL: the loopback, and pasting
    base = prefix if prefix is not None else str(server["base_url"])
    path = "/".join(part for part in (base.strip("/"), CALLBACK_PATH) if part)
    return f"{origin}/{path}"


def is_jupyter_callback(redirect_uri: str) -> bool:
    return urlsplit(redirect_uri).path.endswith("/" + CALLBACK_PATH)


def receiver_for(url: str) -> Receiver | None:
    """What waits for the redirect of the authorization at `url`: the hand-off from the
    Jupyter server, the loopback listener, or nothing (the user pastes the URL)."""
    query = parse_qs(urlsplit(url).query)
    redirect = query.get("redirect_uri", [""])[0]
    try:
        if is_jupyter_callback(redirect):
            return Pending(query.get("state", [""])[0], redirect)
        return LoopbackReceiver(redirect)
    except (ValueError, OSError):
        return None  # not a loopback redirect, or its port is taken, or no hand-off here: pasting it is


def how_it_returns(receiver: Receiver | None) -> str:
    """Which path the redirect takes, for the person waiting."""
    if isinstance(receiver, Pending):
        return "the Jupyter server catches the redirect"
    if receiver is not None:
        return "a listener on this machine's loopback address catches the redirect"
    return "paste the URL the browser ends on"


def caught_by(receiver: Receiver | None) -> str:
    return "the Jupyter server" if isinstance(receiver, Pending) else "the loopback listener"
