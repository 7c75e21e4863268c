"""What a new session gets from the client's side, before it starts: the server-request
handlers and capabilities `roots=`, `sampling=` and `elicitation=` ask for, the log store,
and the retry of a request the server answered with -32042 (URLs for the user to open).

All of it is client_side's own state, added to the connection's core (`api.calls.core`):
the core routes questions and log lines to the waiting cell and retries through the hook
registered here; it imports nothing of this feature.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...base.errors import McpError
from ..calls.core import Core, Retry
from .answers import ServerRequests
from .logs import KeptLog
from .url_required import URL_ELICITATION_REQUIRED, aretry, retry


def install(core: Core, *, roots: Any = None, sampling: Any = None, elicitation: Any = None) -> None:
    """Give `core`'s session (not yet started) the client side's handlers, capabilities and state.

    Handlers the caller registered already (connect's `handlers=`) are kept.
    """
    session = core.session
    requests = ServerRequests(roots=roots, sampling=sampling, elicitation=elicitation)
    if session.rules.server_requests:  # 2026-07-28 has no server requests (nor a client tasks capability)
        requests.receive_tasks(session, taken=lambda method: session.request_handlers.get(method) is not None)
    requests.current_call = core.current_call
    session.notification_handlers.set_inline("notifications/elicitation/complete", requests.on_elicitation_complete)
    capabilities = dict(session.client.capabilities or {})
    for capability, value in requests.capabilities().items():
        capabilities.setdefault(capability, value)
    session.client.capabilities = capabilities
    for method, handler in requests.handlers().items():
        if session.request_handlers.get(method) is None:
            session.request_handlers.set(method, handler)
    core.add(requests)
    log = KeptLog()
    core.add(log)
    core.keep_log = log.keep

    def blocking(error: McpError, send: Callable[[], Any], show: Callable[[Any], None]) -> Any:
        return retry(error, send, requests, core.name, show)

    def awaited(error: McpError, send: Callable[[], Awaitable[Any]], show: Callable[[Any], None]) -> Awaitable[Any]:
        return aretry(error, send, requests, core.name, show)

    core.retry_on(URL_ELICITATION_REQUIRED, Retry(blocking, awaited))
