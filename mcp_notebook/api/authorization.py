"""The `auth=` option of `connect()` made into the HTTP transport's OAuth client.

"auto" (the default) authorizes when the server answers 401, unless the caller already
sends an `Authorization` header; an `OAuth(...)` says how; None never authorizes. Without
an `authorize` callback of the caller's, the user is asked through the front end. Every
credential the flow learns is registered with the trace, so it shows nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..auth.config import OAuth
from ..auth.flow import OAuthFlow
from ..base.errors import UsageError
from ..session.trace import Trace
from . import frontend


def auth_hook(url: str, option: Any, headers: Mapping[str, str], trace: Trace) -> OAuthFlow | None:
    """The OAuth client for a connection to `url`, or None when it is not to authorize."""
    if option is None:
        return None
    if isinstance(option, str) and option == "auto":
        if any(key.lower() == "authorization" for key in headers):
            return None  # the caller brings a credential of its own
        options = OAuth()
    elif isinstance(option, OAuth):
        options = option
    else:
        raise UsageError(f"auth must be 'auto', None or an mcp_notebook.OAuth(...); got {option!r:.80}")
    return OAuthFlow(url, options, events=trace.event, secret=trace.add_secret, authorize=_ask_front_end)


def _ask_front_end(url: str) -> str:
    return frontend.current().authorize(url)
