"""A connection's resources: listing, reading, templates and subscriptions (legacy
`resources/subscribe`, or a modern `subscriptions/listen` stream per resource). Plain
functions that `Connection` lists in its class body; each takes the connection as `self`.

Every method waits in the caller's thread, which wakes every few hundredths of a second
to show what the session thread recorded for it (progress, log messages, questions from
the server) in the caller's cell; Ctrl-C or a timeout cancels the request on the server.
Each has an awaitable twin that waits without blocking the caller's event loop.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread

from ...base.errors import UsageError
from ..calls import feature_steps as steps
from ..calls.exchange import adrive, drive
from ..calls.feature_state import Featured
from ..results.objects import Listing, ResourceResult

# ----- resources -----


def list_resources(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_resources(self.feature_state, refresh))


async def alist_resources(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_resources(self.feature_state, refresh))


def list_resource_templates(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_resource_templates(self.feature_state, refresh))


async def alist_resource_templates(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_resource_templates(self.feature_state, refresh))


def read_resource(self: Featured, uri: str, *, timeout: float | None = None, log_level: str | None = None) -> ResourceResult:
    """Read a resource (text and blobs)."""
    return drive(self.feature_state, steps.read_resource(self.feature_state, uri, timeout, log_level))


async def aread_resource(
    self: Featured, uri: str, *, timeout: float | None = None, log_level: str | None = None
) -> ResourceResult:
    return await adrive(self.feature_state, steps.read_resource(self.feature_state, uri, timeout, log_level))


def template(self: Featured, name: str) -> dict[str, Any]:
    """A resource template by name or by its uriTemplate."""
    return drive(self.feature_state, steps.template(self.feature_state, name))


async def atemplate(self: Featured, name: str) -> dict[str, Any]:
    return await adrive(self.feature_state, steps.template(self.feature_state, name))


def fill_template(self: Featured, name: str, **values: Any) -> str:
    """The URI a template (name or uriTemplate) makes from `values`."""
    return drive(self.feature_state, steps.fill_template(self.feature_state, name, values))


async def afill_template(self: Featured, name: str, **values: Any) -> str:
    return await adrive(self.feature_state, steps.fill_template(self.feature_state, name, values))


def read_template(self: Featured, name: str, **values: Any) -> ResourceResult:
    return drive(self.feature_state, steps.read_template(self.feature_state, name, values))


async def aread_template(self: Featured, name: str, **values: Any) -> ResourceResult:
    return await adrive(self.feature_state, steps.read_template(self.feature_state, name, values))


def subscribe(self: Featured, uri: str, callback: Any = None) -> None:
    """Subscribe to a resource's updates; `callback(uri)` runs in a worker thread on each one.
    Legacy: `resources/subscribe`; modern: a `subscriptions/listen` stream for that resource."""
    if self.feature_state.session.era == "modern":
        _listen_to(self, uri, callback)
    else:
        drive(self.feature_state, steps.subscribe(self.feature_state, uri, callback))


async def asubscribe(self: Featured, uri: str, callback: Any = None) -> None:
    if self.feature_state.session.era == "modern":
        await anyio.to_thread.run_sync(_listen_to, self, uri, callback)
    else:
        await adrive(self.feature_state, steps.subscribe(self.feature_state, uri, callback))


def unsubscribe(self: Featured, uri: str) -> None:
    if self.feature_state.session.era == "modern":
        _stop_listening_to(self, uri)
    else:
        drive(self.feature_state, steps.unsubscribe(self.feature_state, uri))


async def aunsubscribe(self: Featured, uri: str) -> None:
    if self.feature_state.session.era == "modern":
        await anyio.to_thread.run_sync(_stop_listening_to, self, uri)
    else:
        await adrive(self.feature_state, steps.unsubscribe(self.feature_state, uri))


def _listen_to(self: Featured, uri: str, callback: Any) -> None:
    fx = self.feature_state
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
    fx = self.feature_state
    with fx.lock:
        subscription = fx.listens.pop(uri, None)
        fx.subscriptions.pop(uri, None)
    if subscription is None:
        raise UsageError(f"{self.name}: not subscribed to {uri}")
    subscription.close()


def resource_updates(self: Featured, uri: str | None = None) -> int:
    """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
    counts = self.feature_state.update_counts
    return counts.get(uri, 0) if uri is not None else sum(counts.values())
