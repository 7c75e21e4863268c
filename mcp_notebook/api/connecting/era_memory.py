"""Era verdicts remembered across kernels: which servers the probe found legacy, or modern.

One small JSON file in the user data directory (`eras.json`, kept by `configs.store`'s rules:
ours alone, written whole), so a server is probed once, not once per kernel. A server is
named there by a SHA-256 of its command line, or of its URL's scheme, host, port and path
(never its user info or query): the file says nothing of which servers they are, and holds
no secret a command line or URL may carry. At most `MAX_SERVERS` verdicts; the oldest go.
An HTTP server on a loopback address is not remembered: its port is one handed out afresh
to whatever starts next (a test or development server), so the next server there is likely
another, and probing it costs one local round trip.

A verdict is a hint, never a pin (`era=` still decides when given): `targets` opens a server
remembered legacy with the handshake at once, and one remembered modern with the probe it
would send anyway. A verdict that turns out wrong is forgotten, the server probed afresh in
the same connect (`connect._opening`), and the new verdict remembered. The file is a cache:
one that cannot be read or written is no verdict, never an error.
"""

from __future__ import annotations

import hashlib
import ipaddress
import shlex
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ...configs import store
from ...session.era import ERAS

FILE = "eras.json"
MAX_SERVERS = 256


def server_key(target: str | Sequence[str]) -> str | None:
    """What a verdict belongs to: a digest of the command line, or of the URL without user info and
    query; None for a URL on a loopback address (not remembered)."""
    if isinstance(target, str) and target.lstrip().lower().startswith(("http://", "https://")):
        parts = urlsplit(target.strip())
        if _loopback(parts.hostname or ""):
            return None
        port = f":{parts.port}" if parts.port is not None else ""
        named = f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}{port}{parts.path or '/'}"
    else:
        named = " ".join(shlex.split(target) if isinstance(target, str) else map(str, target))
    return hashlib.sha256(named.encode("utf-8", errors="surrogatepass")).hexdigest()


def recall(target: str | Sequence[str]) -> str | None:
    """The era an earlier probe found for this server ("legacy" or "modern"), if one did."""
    key = server_key(target)
    entry = store.load(FILE).get(key) if key is not None else None
    era = entry.get("era") if isinstance(entry, dict) else None
    return era if era in ERAS else None


def remember(target: str | Sequence[str], era: str) -> None:
    """Keep a probe's verdict (written only when it changed)."""
    key = server_key(target)
    if key is None or era not in ERAS or recall(target) == era:
        return

    def change(data: dict[str, Any]) -> None:
        data[key] = {"era": era, "at": time.time()}
        for old in sorted(data, key=lambda k: _at(data[k]))[: max(len(data) - MAX_SERVERS, 0)]:
            del data[old]

    _update(change)


def forget(target: str | Sequence[str]) -> None:
    """Drop a verdict that turned out wrong."""
    key = server_key(target)
    if key is not None and key in store.load(FILE):
        _update(lambda data: data.pop(key, None))


def _loopback(host: str) -> bool:
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _at(entry: Any) -> float:
    at = entry.get("at") if isinstance(entry, dict) else None
    return at if isinstance(at, (int, float)) else 0.0


def _update(change: Any) -> None:
    try:
        store.update(FILE, change)
    except OSError:  # an unsafe or read-only data directory: the next connect probes again
        pass
