"""A new session's features, composed on its core before it starts: the core every request
needs (`api.calls.core`), then each feature's own state, made by that feature's module.

The one place that knows every feature's state: the client's side (server requests, the log
store, the URL-required retry), tasks (their status watch), tools (compiled argument checks),
resource subscriptions and MCP Apps. Their notification handlers are in place from the first
frame on.
"""

from __future__ import annotations

from typing import Any

from ...session.session import Session
from ..apps.host import AppHost
from ..calls.core import Core
from ..client_side.install import install as install_client_side
from ..display import frontend
from ..resources.updates import ResourceUpdates
from ..results import app_meta
from ..tasks.follow import TaskWatch
from ..tools.checks import ToolChecks


def install(
    session: Session, name: str, *, roots: Any = None, sampling: Any = None, elicitation: Any = None, apps: bool | None = None
) -> Core:
    """The core of a new session, not yet started, with every feature's state on it; `apps`:
    declare MCP Apps (None: where the front end can draw them)."""
    core = Core(session, name, frontend.current)
    install_client_side(core, roots=roots, sampling=sampling, elicitation=elicitation)
    core.add(TaskWatch(session))
    core.add(ToolChecks())
    core.add(ResourceUpdates(session))
    host = AppHost(frontend.current().apps_default() if apps is None else bool(apps))
    core.add(host)
    if host.enabled:
        session.client.capabilities = app_meta.declare(session.client.capabilities)
    return core
