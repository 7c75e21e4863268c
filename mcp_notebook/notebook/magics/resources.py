"""The resource subcommands: `%mcp resources`, `read`, `subscribe`, `unsubscribe`, on one connection
named as `commands.connection` says. `subscribe` displays a live panel (`widgets.live`) in Jupyter
and prints text elsewhere; `read` returns the result object.
"""

from __future__ import annotations

from argparse import Namespace

from ...api.results.objects import Listing, ResourceResult
from ...base.plural import counted
from . import show
from .commands import REFRESH, arg, connection, connection_of, flag, key_values, pairs, subcommand


@subcommand(
    "resources",
    "the server's resources (or resource templates)",
    connection(positional=True),
    flag("--templates", help="the resource templates instead"),
    REFRESH,
)
def _resources(ns: Namespace) -> Listing:
    conn = connection_of(ns)
    return conn.list_resource_templates(refresh=ns.refresh) if ns.templates else conn.list_resources(refresh=ns.refresh)


@subcommand(
    "read",
    "read a resource, or the one a template makes from its variables",
    connection(),
    arg("target", help="a resource URI, or a resource template (its URI template or name)"),
    pairs("var=value", "a template's variables"),
)
def _read(ns: Namespace) -> ResourceResult:
    conn = connection_of(ns)
    if ns.pairs or "{" in ns.target:
        return conn.read_template(ns.target, **key_values(ns.pairs))
    return conn.read_resource(ns.target)


@subcommand(
    "subscribe",
    "subscribe to a resource and show its updates live (--read: re-read it on each update and show the content); "
    "with no URI: every subscription of the connection, live",
    connection(),
    arg("uri", nargs="?", help="the resource to subscribe to"),
    flag("--read", help="re-read the resource on each update"),
)
def _subscribe(ns: Namespace) -> None:
    conn = connection_of(ns)
    if ns.uri is not None:
        conn.subscribe(ns.uri)
    if show.frontend():
        show.display(conn.subscriptions.panel(ns.uri, read=ns.read))
        return
    if ns.uri is not None:
        print(
            f"subscribed to {ns.uri} on {conn.name!r}; conn.subscriptions.updates(uri) counts its updates"
            + (" (live content needs a Jupyter widget frontend)" if ns.read else "")
        )
    else:
        from ...api.display.panels import subscriptions_snapshot

        print(subscriptions_snapshot(conn)[0])


@subcommand(
    "unsubscribe",
    "stop a resource subscription (its live view says so and stops)",
    connection(),
    arg("uri", help="the resource"),
)
def _unsubscribe(ns: Namespace) -> None:
    conn = connection_of(ns)
    conn.unsubscribe(ns.uri)
    updates = conn.subscriptions.updates(ns.uri)
    print(f"unsubscribed from {ns.uri} on {conn.name!r} after {counted(updates, 'update')}")
