"""The steps every feature's methods share: a paginated listing (cached until the server says
it changed; the tools the session left out of one shown as warnings) and a per-request log
level, checked.

Steps are generators that yield the requests they need (`CallSpec`) and return the method's
result; each feature's module writes its methods as steps and `twins` gives each its blocking
and awaitable face. The steps know neither.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ..results.objects import Listing
from .core import Core
from .exchange import CallSpec, Steps
from .progress import LOG_LEVELS

MAX_PAGES = 1000


def request_log_level(fx: Core, level: str | None) -> str | None:
    """A per-request log level, checked: it exists in the modern era only (2026-07-28 `_meta`)."""
    if level is None:
        return None
    if level not in LOG_LEVELS:
        raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
    if not fx.session.rules.log_level_per_request:
        raise UsageError(
            f"{fx.name}: a log level per request needs a modern (2026-07-28) connection; this one is legacy: use set_log_level()"
        )
    return level


def listing(fx: Core, method: str, key: str, refresh: bool, capability: str) -> Steps[Listing]:
    """A list the server declares with `capability`, every page, from the cache unless `refresh`."""
    if capability not in fx.session.server.capabilities:
        return Listing(key, [])  # a server without the capability has none: an empty list, in either era
    cached = None if refresh else fx.listings.cached(key)
    if cached is not None:
        return cached
    before = fx.listings.changed(key)
    found = Listing(key, (yield from pages(fx, method, key)))
    fx.listings.store(key, found, before)
    if key == "tools":
        for text in fx.session.eras.listed_tools.untold():  # tools the session left out (x-mcp-header)
            fx.front().warn(f"{fx.name}: {text}")
    return found


def pages(fx: Core, method: str, key: str) -> Steps[list[dict[str, Any]]]:
    """Every page of a paginated list (an opaque cursor seen twice ends it)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        result = yield CallSpec(method, {"cursor": cursor} if cursor else None)
        items += [item for item in result.get(key) or [] if isinstance(item, dict)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor or cursor in seen:
            break
        seen.add(cursor)
    return items
