"""The grants that need a person: the authorization code, through a browser the user (or their
`authorize` callback) drives, and the device grant, whose code the front end shows.

Where the browser is sent back to is decided here too: the given redirect URI, else the
callback of the Jupyter server this kernel runs under, else the loopback default. A device
grant's polling ends when no request waits for its flow any more (each was given up:
Ctrl-C), as well as on the front end's Cancel; an `authorize` callback still waiting then is
abandoned (`asking`). A user's callback that fails ends the flow, never the connection.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.to_thread

from ..base.errors import AuthorizationError
from ..transports.urls import redact_url
from .asking import ask_user
from .config import DEFAULT_REDIRECT_URI, OAuth
from .device import DeviceWait, ShowCode, poll_for_token, request_device_code
from .discovery import Discovered
from .dpop import DpopKey
from .exchange import AuthExchange
from .grants import Token, authorization_code, authorization_request, exchange_code
from .identity import ClientIdentity
from .redirects import jupyter_callback

Authorize = Callable[[str], str]


class PersonGrants:
    """Asks the user of one flow: for an authorization, or to enter a device code."""

    def __init__(self, options: OAuth, http: AuthExchange, authorize: Authorize | None, show_code: ShowCode | None) -> None:
        self.options = options
        self.http = http
        self._authorize = options.authorize or authorize
        self._show_code = show_code
        self._redirect: str | None = None

    async def authorization_code(
        self,
        found: Discovered,
        client: ClientIdentity,
        scopes: tuple[str, ...] | None,
        dpop: DpopKey | None,
        unwanted: anyio.Event | None = None,
    ) -> Token:
        """The authorization code grant; once `unwanted` is set (no request waits any more), the
        callback is no longer waited for."""
        request = authorization_request(found, client, self.redirect_for(client), scopes)
        self.http.step(
            "authorization", "asking the user to authorize", url=redact_url(request.url), scopes=" ".join(scopes or ())
        )
        redirected = await self._ask(request.url, unwanted)
        code = authorization_code(request, redirected, found)
        self.http.secret(code)
        return await exchange_code(self.http, found, client, request, code, scopes, dpop)

    async def device(
        self, found: Discovered, client: ClientIdentity, scopes: tuple[str, ...] | None, waiting: Callable[[], int]
    ) -> Token:
        """The device grant; `waiting` counts the requests still waiting for it."""
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

        def stop() -> str | None:
            if view.cancelled():
                return "authorization cancelled"
            if waiting() == 0:
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

    async def _ask(self, url: str, unwanted: anyio.Event | None) -> str:
        authorize = self._authorize
        if authorize is None:
            raise AuthorizationError(
                "the server wants OAuth authorization and nothing here can ask you: pass auth=OAuth(authorize=...)"
            )
        return await ask_user(authorize, url, unwanted)

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

    def redirect_for(self, client: ClientIdentity) -> str:
        """The Jupyter callback only for a client registered with it; a client registered
        beforehand, by a metadata document or by an older kernel keeps the given redirect URI."""
        preferred = self.redirect_uri()
        return preferred if preferred in client.redirect_uris else self.options.redirect_uri


def _finish(view: DeviceWait, note: str, *, failed: bool) -> None:
    """Tell the front end's showing of a device code how it ended; its failure changes nothing."""
    try:
        view.finish(note, failed)
    except Exception:  # noqa: BLE001 - a front end's display: the flow's outcome stands
        pass
