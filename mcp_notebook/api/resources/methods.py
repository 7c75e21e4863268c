"""A connection's resources: listing, reading, templates and subscriptions (legacy
`resources/subscribe`, or a modern `subscriptions/listen` stream per resource), and the
RFC 6570 expansion of a template's URI.

Each request method is written once, as steps over the connection; the table at the end
gives each its blocking face and awaitable twin (`calls.twins`), which `Connection` takes by
name. `subscribe` and `unsubscribe` are written out for both faces: on modern connections
they open or close a `subscriptions/listen` stream, which is no request of the steps' kind.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import anyio.to_thread

from ...base.errors import UsageError
from ..calls.core import Featured
from ..calls.exchange import CallSpec, Steps, adrive, drive
from ..calls.steps import listing, request_log_level
from ..calls.twins import twin
from ..results.objects import Listing, ResourceResult
from . import updates


def list_resources(conn: Featured, *, refresh: bool = False) -> Steps[Listing]:
    """The server's resources (every page), cached until the server says the list changed."""
    return (yield from listing(conn._core, "resources/list", "resources", refresh, "resources"))


def list_resource_templates(conn: Featured, *, refresh: bool = False) -> Steps[Listing]:
    """The server's resource templates (every page), cached until the server says the list changed."""
    fx = conn._core
    return (yield from listing(fx, "resources/templates/list", "resourceTemplates", refresh, "resources"))


def read_resource(
    conn: Featured, uri: str, *, timeout: float | None = None, log_level: str | None = None
) -> Steps[ResourceResult]:
    """Read a resource (text and blobs)."""
    level = request_log_level(conn._core, log_level)
    return ResourceResult(uri, (yield CallSpec("resources/read", {"uri": uri}, timeout, log_level=level)))


def template(conn: Featured, name: str) -> Steps[dict[str, Any]]:
    """A resource template by name or by its uriTemplate."""
    templates = yield from list_resource_templates(conn)
    found = templates.get(name) or next((t for t in templates if t.get("uriTemplate") == name), None)
    if found is None:
        raise UsageError(
            f"{conn._core.name}: unknown resource template {name!r}; the templates are: {', '.join(templates.names()) or 'none'}"
        )
    return found


def fill_template(conn: Featured, /, name: str, **values: Any) -> Steps[str]:
    """The URI a template (name or uriTemplate) makes from `values`."""
    return expand_template((yield from template(conn, name))["uriTemplate"], values)


def read_template(conn: Featured, /, name: str, **values: Any) -> Steps[ResourceResult]:
    """Read the resource a template (name or uriTemplate) makes from `values`."""
    return (yield from read_resource(conn, (yield from fill_template(conn, name, **values))))


def resource_updates(self: Featured, uri: str | None = None) -> int:
    """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
    kept = updates.of(self)
    return kept.counts.get(uri, 0) if uri is not None else kept.total


# ----- subscriptions: a request (legacy) or a stream (modern) -----


def subscribe(self: Featured, uri: str, callback: Any = None) -> None:
    """Subscribe to a resource's updates; `callback(uri)` runs in a worker thread on each one.
    Legacy: `resources/subscribe`; modern: a `subscriptions/listen` stream for that resource."""
    if self._core.session.rules.listens:
        _listen_to(self, uri, callback)
    else:
        drive(self._core, _subscribe(self, uri, callback))


async def asubscribe(self: Featured, uri: str, callback: Any = None) -> None:
    """`subscribe`, awaited: the caller's event loop keeps running."""
    if self._core.session.rules.listens:
        await anyio.to_thread.run_sync(_listen_to, self, uri, callback)
    else:
        await adrive(self._core, _subscribe(self, uri, callback))


def unsubscribe(self: Featured, uri: str) -> None:
    """Stop a resource's updates (legacy `resources/unsubscribe`; modern: its stream closed)."""
    if self._core.session.rules.listens:
        _stop_listening_to(self, uri)
    else:
        drive(self._core, _unsubscribe(self, uri))


async def aunsubscribe(self: Featured, uri: str) -> None:
    """`unsubscribe`, awaited: the caller's event loop keeps running."""
    if self._core.session.rules.listens:
        await anyio.to_thread.run_sync(_stop_listening_to, self, uri)
    else:
        await adrive(self._core, _unsubscribe(self, uri))


def _subscribe(conn: Featured, uri: str, callback: Any = None) -> Steps[None]:
    if not (conn._core.session.server.capabilities.get("resources") or {}).get("subscribe"):
        raise UsageError(f"{conn.name}: the server does not support resource subscriptions")
    yield CallSpec("resources/subscribe", {"uri": uri})
    fx = updates.of(conn)
    with fx.lock:
        fx.subscriptions.setdefault(uri, [])
        if callback is not None:
            fx.subscriptions[uri].append(callback)


def _unsubscribe(conn: Featured, uri: str) -> Steps[None]:
    fx = updates.of(conn)
    yield CallSpec("resources/unsubscribe", {"uri": uri})
    with fx.lock:
        fx.subscriptions.pop(uri, None)


def _listen_to(self: Featured, uri: str, callback: Any) -> None:
    fx = updates.of(self)
    with fx.lock:
        listening = uri in fx.listens
    if not listening:
        subscription = self.listen(resource_uris=[uri])
        granted = (subscription.acknowledged or {}).get("resourceSubscriptions") or []
        if uri not in granted:
            subscription.close()
            raise UsageError(f"{self.name}: the server did not take a subscription to {uri}")
        with fx.lock:
            fx.listens[uri] = subscription
    with fx.lock:
        fx.subscriptions.setdefault(uri, [])
        if callback is not None:
            fx.subscriptions[uri].append(callback)


def _stop_listening_to(self: Featured, uri: str) -> None:
    fx = updates.of(self)
    with fx.lock:
        subscription = fx.listens.pop(uri, None)
        fx.subscriptions.pop(uri, None)
    if subscription is None:
        raise UsageError(f"{self.name}: not subscribed to {uri}")
    subscription.close()


# ----- the table: each method's blocking face and awaitable twin, taken by `Connection` -----

LIST_RESOURCES = twin(list_resources)
LIST_RESOURCE_TEMPLATES = twin(list_resource_templates)
READ_RESOURCE = twin(read_resource)
TEMPLATE = twin(template)
FILL_TEMPLATE = twin(fill_template)
READ_TEMPLATE = twin(read_template)


def expand_template(template: str, values: dict[str, Any]) -> str:
    """RFC 6570 expansion for the common operators: {x}, {+x}, {#x}, {/x}, {?x,y}, {&x}."""

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        op, names = (body[0], body[1:]) if body[0] in ("+", "#", "/", "?", "&", ".") else ("", body)
        parts = []
        for name in [n.strip().rstrip("*") for n in names.split(",")]:
            if name not in values:
                if op in ("?", "&"):
                    continue
                raise UsageError(f"the template {template} needs a value for {name!r}")
            text = str(values[name])
            encoded = quote(text, safe=":/?#[]@!$&'()*+,;=") if op in ("+", "#") else quote(text, safe="")
            parts.append(f"{name}={encoded}" if op in ("?", "&") else encoded)
        if not parts:
            return ""
        joiner = {"": ",", "+": ",", "#": ",", "/": "/", ".": ".", "?": "&", "&": "&"}[op]
        prefix = {"": "", "+": "", "#": "#", "/": "/", ".": ".", "?": "?", "&": "&"}[op]
        return prefix + joiner.join(parts)

    unknown = set(values) - set(re.findall(r"[\w.]+", " ".join(re.findall(r"\{([^}]*)\}", template))))
    if unknown:
        raise UsageError(f"the template {template} has no variable(s) {', '.join(sorted(unknown))}")
    return re.sub(r"\{([^}]+)\}", one, template)
