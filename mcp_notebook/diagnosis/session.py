"""The doctor's last steps, through the real client: how `connect()` went (handshake or
discovery; the era probe step before opened it), the era and version it settled on, a ping
(a liveness probe in the modern era), and the listings the server declares.

No second client: these are the connection a user would get, with every option given to
`doctor()`, each request bounded by the step's time limit. The connection is registered
under a name of the doctor's own (never one in use) and closed when the diagnosis ends.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import AuthorizationError, HandshakeError, McpError, McpNotebookError, RequestTimeout, TransportError
from ..base.text import one_line
from .context import Context
from .probe import legacy_hint
from .report import Step

MAX_PAGES = 20
LISTINGS = (
    ("tools", "tools/list", "tools"),
    ("resources", "resources/list", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates"),
    ("prompts", "prompts/list", "prompts"),
)


def handshake(ctx: Context) -> Step:
    """How opening the connection went (the era probe step opened it): the handshake, or discovery."""
    try:
        conn = _opened(ctx)
    except AuthorizationError as exc:
        return ctx.fail(f"authorization failed: {exc}", "the authorization step above says what the server asks for")
    except RequestTimeout as exc:
        return ctx.fail(
            str(exc),
            f"the server took the request but did not answer within {ctx.timeout:g} s: is it stuck before its first answer?",
        )
    except HandshakeError as exc:
        if ctx.asked is not None:
            return ctx.fail(
                str(exc), f"the era is pinned to {ctx.options.era}: try era='auto', which probes what the server speaks"
            )
        return ctx.fail(
            str(exc),
            legacy_hint(ctx)
            or "the server's log (stderr) usually says why; earlier steps passed, so it is the MCP exchange itself",
        )
    except (TransportError, McpNotebookError) as exc:
        return ctx.fail(str(exc), legacy_hint(ctx) or "see the earlier steps")
    info = conn.server_info or {}
    opened = conn.rules.opening
    return ctx.ok(
        f"{one_line(info.get('name', '?'))} {one_line(info.get('version', ''))} answered {opened} over {conn.health.transport}"
    )


def _opened(ctx: Context) -> Any:
    """The connection the era probe step opened, or the error that stopped it."""
    failure = ctx.facts.get("connect_failure")
    if failure is not None:
        raise failure
    return _conn(ctx)


def _conn(ctx: Context) -> Any:
    assert ctx.conn is not None
    return ctx.conn


def version(ctx: Context) -> Step:
    """The era and protocol version, and how they were chosen."""
    conn = _conn(ctx)
    how = conn.health.era_source or "as asked"
    era = conn.rules.opening_words
    return ctx.ok(f"protocol {conn.protocol_version} ({era}); how it was chosen: {one_line(how)}")


def ping(ctx: Context) -> Step:
    """A ping answered (legacy), or a liveness probe (modern, where ping was removed)."""
    conn = _conn(ctx)
    rules = conn.rules
    what = rules.probe if rules.pings else f"{rules.probe} ({rules.probe_method})"
    try:
        rtt = conn.ping(timeout=ctx.timeout)
    except McpError as exc:
        return ctx.warn(
            f"{what} answered with an error: {exc}",
            "answer ping with an empty result: clients use it to tell a live server from a hung one",
        )
    except RequestTimeout:
        return ctx.fail(f"no answer to {what} within {ctx.timeout:g} s", "answer ping at once, even while a tool call runs")
    except McpNotebookError as exc:
        return ctx.fail(f"{what} failed: {exc}", "see the server's stderr")
    return ctx.ok(f"{what} answered in {rtt * 1000:.1f} ms")


def listings(ctx: Context) -> Step:
    """Every listing the server's capabilities declare, paged to the end."""
    conn = _conn(ctx)
    capabilities = conn.server_capabilities
    counts: list[str] = []
    for capability, method, key in LISTINGS:
        if capability not in capabilities:
            continue
        try:
            count = _count(conn, method, key, ctx.timeout)
        except McpError as exc:
            if method == "resources/templates/list" and exc.code == -32601:
                continue  # templates are optional under the resources capability
            return ctx.fail(f"{method} failed: {exc}", f"the server declares {capability}, so {method} must answer")
        except McpNotebookError as exc:
            return ctx.fail(f"{method} failed: {exc}", "see the server's stderr")
        except ValueError as exc:
            return ctx.fail(f"{method}: {exc}", "each page's nextCursor must lead on, and the last page has none")
        noun = "resource templates" if key == "resourceTemplates" else key
        counts.append(f"{count} {noun.removesuffix('s') if count == 1 else noun}")
    if not counts:
        return ctx.ok("the server declares no tools, resources or prompts")
    return ctx.ok(", ".join(counts))


def _count(conn: Any, method: str, key: str, timeout: float) -> int:
    count, cursor, seen = 0, None, set()
    for _ in range(MAX_PAGES):
        result = conn.request(method, {"cursor": cursor} if cursor else None, timeout=timeout)
        items = result.get(key) if isinstance(result, dict) else None
        if not isinstance(items, list):
            raise ValueError(f"the result has no {key} list")
        count += len(items)
        cursor = result.get("nextCursor")
        if not cursor:
            return count
        if cursor in seen:
            raise ValueError(f"nextCursor {str(cursor)[:40]!r} came twice: the pages loop")
        seen.add(cursor)
    raise ValueError(f"more than {MAX_PAGES} pages")
