"""One HTTP client configuration for every request the package makes: the transport's POSTs
and streams, the authorization flow, the command-line client and the demo helpers.

`HttpSettings` says where requests go (one proxy, or the environment's `HTTP_PROXY`,
`HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY`, read as urllib and curl read them), whom they
trust (the operating system's certificate store, as httpcore2 finds it, unless
`SSL_CERT_FILE` / `SSL_CERT_DIR` or `verify=` name other roots), how long a connect may take,
how long a server may pause mid-answer, and who the client says it is. `async_client` and `sync_client` build every httpx2 client
from it, so no two parts of the package can disagree on any of these: nothing else in the
package constructs an httpx2 client. Each client's transport is a `Routes`, which sends a
request through the transport of its origin's route (direct, or a proxy), each made once
with TCP_NODELAY (without it every small POST waits ~40 ms for Nagle and delayed ACK).
"""

from __future__ import annotations

import functools
import os
import socket
import ssl
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpcore2
import httpx2

from ..base.about import __version__

SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
USER_AGENT = f"mcp-notebook/{__version__}"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 30.0
DIRECT = ""  # the proxy setting that sends every request straight to its server, whatever the environment says

Verify = ssl.SSLContext | str | bool


@dataclass(frozen=True)
class HttpSettings:
    """How the package's HTTP requests travel.

    `proxy`: None follows the environment; a URL sends every request through that proxy;
    `DIRECT` ("") none. Hosts `NO_PROXY` names are reached directly either way.
    `read_timeout`: how long a server may pause in an answer that has no deadline of its own
    (a body, the status of a notification we POST); an SSE stream answering a request has its
    request's timeout instead, and a listening stream may be silent for as long as nothing happens.
    `verify`: True trusts the operating system's roots (or those `SSL_CERT_FILE` /
    `SSL_CERT_DIR` name); a path, the CA bundle (or directory) there; False, any certificate;
    or an `ssl.SSLContext` of one's own.
    """

    proxy: str | None = None
    verify: Verify = True
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    user_agent: str = USER_AGENT

    def ssl_context(self) -> ssl.SSLContext:
        if isinstance(self.verify, ssl.SSLContext):
            return self.verify
        return _ssl_context(self.verify, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))

    def proxies(self) -> dict[str, str]:
        """The proxy of each URL scheme ("all" for any), as the settings and the environment say now."""
        if self.proxy is None:
            return {scheme: _with_scheme(url) for scheme, url in urllib.request.getproxies().items() if scheme != "no"}
        return {"all": _with_scheme(self.proxy)} if self.proxy else {}


@functools.lru_cache(maxsize=8)
def _ssl_context(verify: str | bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """One context per choice of roots (and of `SSL_CERT_*`), made once: loading roots costs
    tens of milliseconds, which every transport httpx2 makes itself would pay again."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if isinstance(verify, str):
        is_dir = os.path.isdir(verify)
        return ssl.create_default_context(cafile=None if is_dir else verify, capath=verify if is_dir else None)
    return httpcore2.default_ssl_context()  # the system's roots, or SSL_CERT_FILE / SSL_CERT_DIR, as httpx2's own default


def _with_scheme(url: str) -> str:
    return url if "://" in url else f"http://{url}"


T = TypeVar("T")


class RouteTable(Generic[T]):
    """Which proxy, if any, each origin is reached through, and one transport per route.

    The environment is read when the table is made (a client built after `HTTPS_PROXY`
    changes sees the change); each origin's route is worked out once.
    """

    def __init__(self, settings: HttpSettings, make: Callable[[str | None], T]) -> None:
        self._proxies = settings.proxies()
        self._bypass = {"no": os.environ.get("no_proxy") or os.environ.get("NO_PROXY") or ""}
        self._make = make
        self._by_origin: dict[tuple[str, str, int | None], T] = {}
        self.by_proxy: dict[str | None, T] = {}

    def proxy_for(self, url: httpx2.URL) -> str | None:
        proxy = self._proxies.get(url.scheme) or self._proxies.get("all")
        if proxy is None or not self._bypass["no"]:
            return proxy
        host = f"{url.host}:{url.port}" if url.port else url.host
        bypass = urllib.request.proxy_bypass_environment(host, self._bypass)  # type: ignore[attr-defined]  # not in typeshed
        return None if bypass else proxy

    def for_url(self, url: httpx2.URL) -> T:
        origin = (url.scheme, url.host, url.port)
        transport = self._by_origin.get(origin)
        if transport is None:
            proxy = self.proxy_for(url)
            transport = self.by_proxy.get(proxy)
            if transport is None:
                transport = self.by_proxy[proxy] = self._make(proxy)
            self._by_origin[origin] = transport
        return transport


class AsyncRoutes(httpx2.AsyncBaseTransport):
    """An async client's transport: each request through its origin's route."""

    def __init__(self, settings: HttpSettings) -> None:
        context = settings.ssl_context()
        self.table: RouteTable[httpx2.AsyncHTTPTransport] = RouteTable(
            settings, lambda proxy: httpx2.AsyncHTTPTransport(verify=context, proxy=proxy, socket_options=SOCKET_OPTIONS)
        )

    def for_url(self, url: httpx2.URL) -> httpx2.AsyncHTTPTransport:
        return self.table.for_url(url)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self.table.for_url(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        for transport in list(self.table.by_proxy.values()):
            await transport.aclose()


class SyncRoutes(httpx2.BaseTransport):
    """A blocking client's transport: each request through its origin's route."""

    def __init__(self, settings: HttpSettings) -> None:
        context = settings.ssl_context()
        self.table: RouteTable[httpx2.HTTPTransport] = RouteTable(
            settings, lambda proxy: httpx2.HTTPTransport(verify=context, proxy=proxy, socket_options=SOCKET_OPTIONS)
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.table.for_url(request.url).handle_request(request)

    def close(self) -> None:
        for transport in list(self.table.by_proxy.values()):
            transport.close()


def async_client(
    settings: HttpSettings,
    *,
    timeout: httpx2.Timeout | float | None = None,
    follow_redirects: bool = False,
    headers: Mapping[str, str] | None = None,
    routes: AsyncRoutes | None = None,
    **options: Any,
) -> httpx2.AsyncClient:
    """An async client on the settings, sending through `routes` (made here if not given)."""
    return httpx2.AsyncClient(
        transport=routes or AsyncRoutes(settings),
        timeout=_timeout(settings, timeout),
        follow_redirects=follow_redirects,
        headers={"User-Agent": settings.user_agent, **(headers or {})},
        **options,
    )


def sync_client(
    settings: HttpSettings, *, timeout: float | None = None, follow_redirects: bool = False, **options: Any
) -> httpx2.Client:
    """A blocking client on the settings (the command-line client, the demo's helpers)."""
    return httpx2.Client(
        transport=SyncRoutes(settings),
        timeout=_timeout(settings, timeout),
        follow_redirects=follow_redirects,
        headers={"User-Agent": settings.user_agent},
        **options,
    )


def _timeout(settings: HttpSettings, timeout: httpx2.Timeout | float | None) -> httpx2.Timeout:
    if isinstance(timeout, httpx2.Timeout):
        return timeout
    every = 30.0 if timeout is None else timeout
    return httpx2.Timeout(every, connect=min(settings.connect_timeout, every))
