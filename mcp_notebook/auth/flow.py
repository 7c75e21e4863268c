"""`OAuthFlow`: the OAuth client of one HTTP connection, as its transport's `AuthHook`.

On a 401 it refreshes the token if it can, else authorizes afresh: discovery, the client's
identity, then the grant (the authorization code through the user, the device grant with a
code the user enters anywhere, client credentials, or cross-app access), asking again for the
scopes the lapsed token held. On a 403 `insufficient_scope` it steps up, asking for the
union of the scopes held and those challenged. One flow at a time, run in the connection's
task group: every request that needs it waits for it and is sent again with the new token.
A request is sent again at most `MAX_RETRIES` times, and a step-up that could not help (the
token holds every scope asked for) is refused rather than repeated. A token with a refresh
token is refreshed in the background `REFRESH_AHEAD` seconds before it expires. The token
goes only to the server's own origin. A flow that asks the user ends when no request waits for
it any more (each was given up: Ctrl-C): a device grant's polling stops, and an `authorize`
callback still waiting is abandoned (its thread left to return), as well as on the front
end's Cancel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import anyio.abc
import anyio.to_thread
import httpx2

from ..base.errors import AuthorizationError
from ..base.text import plain
from ..transports.http_client import HttpSettings
from ..transports.urls import redact_url
from .asking import ask_user
from .challenge import Challenge, bearer_challenge, origin_of
from .config import DEFAULT_REDIRECT_URI, OAuth
from .device import DEVICE_GRANT, DeviceWait, ShowCode, offered, poll_for_token, request_device_code
from .discovery import Discovered, discover
from .exchange import AuthExchange, Events
from .grants import Token, authorization_code, authorization_request, client_credentials, cross_app, exchange_code, refresh
from .identity import ClientIdentity, NotOffered, identify
from .redirects import jupyter_callback
from .store import TokenStore

MAX_RETRIES = 3
REFRESH_AHEAD = 60.0  # seconds before its expiry a token is refreshed, in the background
Authorize = Callable[[str], str]


@dataclass
class _Run:
    """One run of the flow, which every request that needs it waits for."""

    done: anyio.Event
    error: AuthorizationError | None = None
    waiting: int = 0  # requests waiting for it now
    unwanted: anyio.Event = field(default_factory=anyio.Event)  # the last request waiting for it gave up


class OAuthFlow:
    """Authorizes the requests of one connection to `server_url`."""

    def __init__(
        self,
        server_url: str,
        options: OAuth,
        *,
        events: Events,
        secret: Callable[[str], None],
        authorize: Authorize | None = None,
        http: HttpSettings | None = None,
        show_code: ShowCode | None = None,
    ) -> None:
        self.server_url = server_url
        self.options = options
        self._authorize = options.authorize or authorize
        self._show_code = show_code
        self.http = AuthExchange(events, secret, settings=http)
        self.found: Discovered | None = None
        self.client: ClientIdentity | None = None
        self.token: Token | None = None
        self.authorizations = 0  # authorization grants run (not refreshes)
        self._run: _Run | None = None  # the flow running, or the last one
        self._task_group: anyio.abc.TaskGroup | None = None
        self._loop_thread: int | None = None  # the event loop's thread, where background refreshes start
        self._ahead_tried: Token | None = None  # the token a refresh ahead of expiry was tried for
        access = options.cross_app
        self.http.secret(
            options.client_secret, options.private_key, access and access.id_token, access and access.idp_client_secret
        )
        self.store = TokenStore() if options.remember else None
        self._stale = False  # the metadata came from a saved file: discover afresh before authorizing
        self._redirect: str | None = None
        if self.store is not None:
            self._load(self.store)

    def _load(self, store: TokenStore) -> None:
        loaded = store.load(self.server_url, self.options.client_id)
        if loaded is None:
            return
        self.found, self.client, self.token = loaded
        self._stale = True
        self.http.secret(self.token.access_token, self.token.refresh_token, self.client.secret)
        self.http.step("saved token", f"a saved token from {self.found.issuer}", scopes=" ".join(self.token.scopes))

    def _save(self) -> None:
        if self.store is None or self.found is None or self.client is None or self.token is None:
            return
        try:
            self.store.save(self.server_url, self.found, self.client, self.token)
            self.http.step("saved token", f"the token is saved for later kernels, its secrets in {self.store.where}")
        except OSError as exc:
            self.http.step("saved token", f"the token could not be saved ({exc.strerror}); it lasts this connection only")

    def logout(self) -> int:
        """Forget the token, here and in the saved files; how many files there were."""
        self.token = None
        return self.store.forget(self.server_url) if self.store is not None else 0

    # ----- the AuthHook -----

    def authorization(self, url: str) -> str | None:
        token = self.token
        if token is None or origin_of(url) != origin_of(self.server_url):
            return None
        if token.expires_at is not None and token.refresh_token and token.expires_at - time.time() < REFRESH_AHEAD:
            self._refresh_ahead(token)
        return token.header()

    def attach(self, task_group: anyio.abc.TaskGroup | None) -> None:
        self._task_group = task_group
        self._loop_thread = threading.get_ident()

    def _refresh_ahead(self, token: Token) -> None:
        """Refresh a token about to expire in the background, once per token, while it still
        works; a failure is left to the next 401 (which authorizes afresh)."""
        run = self._run
        if self._task_group is None or threading.get_ident() != self._loop_thread or self._ahead_tried is token:
            return
        if run is not None and not run.done.is_set():
            return
        self._ahead_tried = token
        run = self._run = _Run(anyio.Event())
        self._task_group.start_soon(self._ahead, run, token)

    async def _ahead(self, run: _Run, token: Token) -> None:
        try:
            if self.token is token and self.found is not None and self.client is not None:
                self.token = await refresh(self.http, self.found, self.client, token)
                self.http.step("refresh", "token refreshed before it expired", scopes=" ".join(self.token.scopes))
                self._save()
        except Exception as exc:  # noqa: BLE001 - the token still works; the next 401 authorizes afresh
            self.http.step("refresh", f"refresh ahead of expiry failed: {plain(exc) or type(exc).__name__}")
        finally:
            run.done.set()

    async def retry(self, response: httpx2.Response, attempt: int) -> bool:
        challenge = bearer_challenge(response.headers.get_list("www-authenticate"))
        if response.status_code == 403 and challenge.error != "insufficient_scope":
            return False
        if attempt >= MAX_RETRIES:
            self.http.step("gave up", f"HTTP {response.status_code} after {attempt} authorizations of this request")
            return False
        sent = response.request.headers.get("authorization")
        run = self._run
        if run is not None and not run.done.is_set():
            await self._wait_for(run)
        else:
            if self.token is not None and self.token.header() != sent:
                return True  # authorized meanwhile, for another request
            run = self._run = _Run(anyio.Event())
            if self._task_group is not None:
                self._task_group.start_soon(self._execute, run, response.status_code, challenge)
                await self._wait_for(run)
            else:
                run.waiting += 1
                try:
                    await self._execute(run, response.status_code, challenge)
                finally:
                    run.waiting -= 1
        if isinstance(run.error, NotOffered):
            self.http.step("no oauth", str(run.error))
            return False  # the server's own 401 says more than we could
        if run.error is not None:
            raise AuthorizationError(str(run.error))
        return True

    async def _wait_for(self, run: _Run) -> None:
        run.waiting += 1
        try:
            await run.done.wait()
        finally:
            run.waiting -= 1
            if run.waiting == 0 and not run.done.is_set():
                run.unwanted.set()

    async def _execute(self, run: _Run, status: int, challenge: Challenge) -> None:
        """One flow, in the connection's task group: the request that started it may be given up
        (an era probe that lost its race) without the user being asked twice."""
        try:
            if status == 401:
                await self._renew(challenge)
            else:
                await self._step_up(challenge)
        except AuthorizationError as exc:
            run.error = exc
        except Exception as exc:  # noqa: BLE001 - any failure ends this flow, and fails its requests
            run.error = AuthorizationError(f"authorization failed: {plain(exc) or type(exc).__name__}")
        finally:
            run.done.set()

    async def outwait_user(self) -> bool:
        run = self._run
        if run is None or run.done.is_set():
            return False
        await run.done.wait()
        return True

    async def aclose(self) -> None:
        await self.http.aclose()

    # ----- the flows -----

    async def _renew(self, challenge: Challenge) -> None:
        token, found, client = self.token, self.found, self.client
        if token is not None and token.refresh_token and found is not None and client is not None:
            try:
                self.token = await refresh(self.http, found, client, token)
                self.http.step("refresh", "token refreshed", scopes=" ".join(self.token.scopes))
                self._save()
                return
            except AuthorizationError as exc:
                self.http.step("refresh", f"{exc}; authorizing afresh")
        await self._obtain(challenge, None, keep=token.scopes if token is not None else ())

    async def _step_up(self, challenge: Challenge) -> None:
        held = self.token.scopes if self.token is not None else ()
        wanted = challenge.scopes
        if self.token is not None and wanted and set(wanted) <= set(held):
            raise AuthorizationError(
                f"the server refuses the token (403 insufficient_scope) though it holds every scope asked for "
                f"({' '.join(wanted)}); not asking again"
            )
        union = tuple(dict.fromkeys((*held, *wanted)))
        self.http.step("step-up", f"the server wants scopes {' '.join(wanted) or '(none named)'}", scopes=" ".join(union))
        await self._obtain(challenge, union)

    async def _obtain(self, challenge: Challenge, scopes: tuple[str, ...] | None, keep: tuple[str, ...] = ()) -> None:
        """Authorize afresh for `scopes` (None: the first scopes), plus `keep`: those the lapsed
        token held, so a stepped-up scope is not lost when a failed refresh authorizes again."""
        if self.found is None or self._stale:
            fresh = await discover(self.http, self.server_url, challenge)
            if self.found is not None and fresh.issuer != self.found.issuer:
                self.client = None  # client ids belong to the authorization server that issued them
            self.found, self._stale = fresh, False
        found = self.found
        grant = self._grant(found)
        if scopes is None:
            scopes = self._first_scopes(challenge, found)
        if keep:
            scopes = tuple(dict.fromkeys((*(scopes or ()), *keep)))
        if grant in ("authorization_code", "device") and scopes and "offline_access" not in scopes:
            if found.supports("scopes_supported", "offline_access"):
                scopes = (*scopes, "offline_access")  # SEP-2207: ask for a refresh token where the server offers one
        if self.client is None:
            grants = {
                "authorization_code": ["authorization_code", "refresh_token"],
                "device": [DEVICE_GRANT, "refresh_token"],
            }.get(grant, ["client_credentials"])
            uris = list(dict.fromkeys((self.redirect_uri(), self.options.redirect_uri)))
            self.client = await identify(self.http, self.options, found, uris, grants, scopes or ())
        client = self.client
        self.authorizations += 1
        if grant == "cross-app":
            assert self.options.cross_app is not None
            token = await cross_app(self.http, found, client, self.options.cross_app, scopes)
        elif grant == "client_credentials":
            token = await client_credentials(self.http, found, client, scopes)
        elif grant == "device":
            token = await self._device(found, client, scopes)
        else:
            token = await self._authorization_code(found, client, scopes)
        self.token = token
        self.http.step("token", f"authorized for {found.resource}", scopes=" ".join(token.scopes), issuer=found.issuer)
        self._save()

    async def _authorization_code(self, found: Discovered, client: ClientIdentity, scopes: tuple[str, ...] | None) -> Token:
        request = authorization_request(found, client, self._redirect_for(client), scopes)
        self.http.step(
            "authorization", "asking the user to authorize", url=redact_url(request.url), scopes=" ".join(scopes or ())
        )
        redirected = await self._ask(request.url)
        code = authorization_code(request, redirected, found)
        self.http.secret(code)
        return await exchange_code(self.http, found, client, request, code, scopes)

    async def _device(self, found: Discovered, client: ClientIdentity, scopes: tuple[str, ...] | None) -> Token:
        show = self._show_code
        if show is None:
            raise AuthorizationError("the device grant needs someone to show you its code, and nothing here can")
        code = await request_device_code(self.http, found, client, scopes)
        self.http.step(
            "authorization",
            f"asking the user to enter a code at {redact_url(code.verification_uri)}",
            url=redact_url(code.verification_uri),
            scopes=" ".join(scopes or ()),
        )
        view = await anyio.to_thread.run_sync(show, code, abandon_on_cancel=True)
        run = self._run

        def stop() -> str | None:
            if view.cancelled():
                return "authorization cancelled"
            if run is not None and run.waiting == 0:
                return "authorization given up: no request waits for it any more"
            return None

        try:
            token = await poll_for_token(self.http, found, client, code, scopes, stop)
        except AuthorizationError as exc:
            _finish(view, str(exc), failed=True)
            raise
        except BaseException:
            _finish(view, "authorization given up", failed=True)
            raise
        _finish(view, "approved on the device", failed=False)
        return token

    async def _ask(self, url: str) -> str:
        authorize = self._authorize
        if authorize is None:
            raise AuthorizationError(
                "the server wants OAuth authorization and nothing here can ask you: pass auth=OAuth(authorize=...)"
            )
        run = self._run  # run apart from the requests that wait for it, it is given up with the last of them
        return await ask_user(authorize, url, run.unwanted if run is not None and self._task_group is not None else None)

    def redirect_uri(self) -> str:
        """The given redirect URI; else, where the front end asks the user, the callback of the
        Jupyter server this kernel runs under, if it has one; else the loopback default. Both
        of the latter are registered, so a saved client works in either place."""
        if self._redirect is None:
            options = self.options
            found = None
            if options.redirect_uri == DEFAULT_REDIRECT_URI and options.authorize is None:
                found = jupyter_callback(options.public_url)
            self._redirect = found or options.redirect_uri
        return self._redirect

    def _redirect_for(self, client: ClientIdentity) -> str:
        """The Jupyter callback only for a client registered with it; a client registered
        beforehand, by a metadata document or by an older kernel keeps the given redirect URI."""
        preferred = self.redirect_uri()
        return preferred if preferred in client.redirect_uris else self.options.redirect_uri

    def _grant(self, found: Discovered) -> str:
        options = self.options
        if options.cross_app is not None:
            return "cross-app"
        if options.grant != "auto":
            return options.grant
        if options.private_key is not None:
            return "client_credentials"
        listed = found.metadata.get("grant_types_supported")
        if isinstance(listed, list) and "authorization_code" not in listed:
            if "client_credentials" in listed:
                return "client_credentials"
            if offered(found):
                return "device"
        return "authorization_code"

    def _first_scopes(self, challenge: Challenge, found: Discovered) -> tuple[str, ...] | None:
        """The user's scopes, else the challenge's, else all the resource supports, else none."""
        if self.options.scopes is not None:
            return tuple(self.options.scopes)
        return challenge.scopes or found.scopes_supported or None


def _finish(view: DeviceWait, note: str, *, failed: bool) -> None:
    """Tell the front end's showing of a device code how it ended; its failure changes nothing."""
    try:
        view.finish(note, failed)
    except Exception:  # noqa: BLE001 - a front end's display: the flow's outcome stands
        pass
