"""`%mcp roots [PATH ...]`: the roots this client offers a connection, changed when paths are given
(the server is told with roots/list_changed).
"""

from __future__ import annotations

from argparse import Namespace

from .commands import arg, connection, connection_of, subcommand


@subcommand(
    "roots",
    "the roots this client offers; with paths, change them and tell the server (roots/list_changed)",
    connection(),
    arg("paths", nargs="*", default=[], metavar="PATH", help="the new roots"),
)
def _roots(ns: Namespace) -> None:
    conn = connection_of(ns)
    if ns.paths:
        conn.set_roots(ns.paths)
    roots = conn.roots
    if roots is None:
        print(f"{conn.name}: no roots offered (connect with roots=[path, ...] to offer some)")
        return
    print(f"{conn.name}: {len(roots)} root(s)" + "".join(f"\n  {root['uri']}" for root in roots))
