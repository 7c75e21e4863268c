"""The device authorization grant (RFC 8628): a code to enter at a URL on any device, no redirect.

The client asks the authorization server's `device_authorization_endpoint` for a device code
(with `resource`, RFC 8707; PKCE does not apply), shows the user code and the verification
URL (`verification_uri_complete` when given) through whoever asks the user, then polls the
token endpoint: every `interval` seconds (5 when not given, never under RETRY_FLOOR, so an
`interval: 0` does not poll as fast as the server answers), 5 s more after each `slow_down`,
on through `authorization_pending`, ending at a token, `access_denied`, `expired_token` (or
the code's own `expires_in` passing), or when `stop()` says the wait is given up (Cancel,
Ctrl-C: no request waits any more). The server's numbers are kept to sane bounds: a code is
waited for at most `MAX_LIFETIME`, polled at least every `MAX_INTERVAL` seconds. The device
code is a secret from the moment it arrives: registered for redaction, never in a repr.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ..base.errors import AuthorizationError
from ..base.sizes import RETRY_FLOOR, seconds_within
from ..base.text import plain
from .discovery import Discovered
from .exchange import AuthExchange, oauth_error
from .grants import Token, make_token
from .identity import ClientIdentity, authenticate

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
DEFAULT_INTERVAL = 5.0
SLOW_DOWN = 5.0  # seconds added to the interval by each slow_down (RFC 8628 section 3.5)
DEFAULT_LIFETIME = 600.0  # when the server gives no expires_in
MAX_LIFETIME = 3600.0  # a code said to last longer is waited for this long
MAX_INTERVAL = 60.0  # seconds between polls at most, whatever the interval or slow_downs ask
WAKE = 0.25  # seconds between looks at stop() while waiting for the next poll


@dataclass(frozen=True)
class DeviceCode:
    """What the user is shown (the user code and where to enter it), and the device code behind it."""

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: float
    interval: float
    issuer: str
    device_code: str = field(repr=False)

    @property
    def url(self) -> str:
        """Where to send the user: the URL with the code in it when the server gives one."""
        return self.verification_uri_complete or self.verification_uri


class DeviceWait(Protocol):
    """A front end's showing of a device code while the flow polls."""

    def cancelled(self) -> bool:
        """Whether the user gave the authorization up (a Cancel button)."""
        ...

    def finish(self, note: str, failed: bool) -> None:
        """The outcome, once polling ended: shown, and the showing closed."""


ShowCode = Callable[[DeviceCode], DeviceWait]


def offered(found: Discovered) -> bool:
    """Whether the authorization server advertises the device grant."""
    endpoint = found.metadata.get("device_authorization_endpoint")
    listed = found.metadata.get("grant_types_supported")
    return isinstance(endpoint, str) and (not isinstance(listed, list) or DEVICE_GRANT in listed)


async def request_device_code(
    http: AuthExchange, found: Discovered, client: ClientIdentity, scopes: Sequence[str] | None
) -> DeviceCode:
    """Ask for a device code (RFC 8628 section 3.1), authenticated as at the token endpoint."""
    endpoint = found.metadata.get("device_authorization_endpoint")
    if not isinstance(endpoint, str):
        raise AuthorizationError(
            f"the authorization server {found.issuer} does not offer the device grant (no device_authorization_endpoint)"
        )
    form = {"resource": found.resource}
    if scopes:
        form["scope"] = " ".join(scopes)
    headers = authenticate(client, form, found.issuer)
    status, answer = await http.post("device authorization", endpoint, form=form, headers=headers)
    if status != 200 or not answer or not _strings(answer, "device_code", "user_code", "verification_uri"):
        raise oauth_error("device authorization", status, answer)
    http.secret(answer["device_code"])
    return DeviceCode(
        plain(answer["user_code"])[:100],
        answer["verification_uri"],
        answer["verification_uri_complete"] if _strings(answer, "verification_uri_complete") else None,
        _seconds(answer.get("expires_in"), DEFAULT_LIFETIME, MAX_LIFETIME),
        _seconds(answer.get("interval"), DEFAULT_INTERVAL, MAX_INTERVAL),
        found.issuer,
        answer["device_code"],
    )


async def poll_for_token(
    http: AuthExchange,
    found: Discovered,
    client: ClientIdentity,
    code: DeviceCode,
    scopes: Sequence[str] | None,
    stop: Callable[[], str | None],
) -> Token:
    """Poll the token endpoint until the user has approved (the token), or the wait ends (raised)."""
    endpoint = found.metadata.get("token_endpoint")
    if not isinstance(endpoint, str):
        raise AuthorizationError(f"the authorization server {found.issuer} has no token endpoint")
    interval, deadline, polls = code.interval, time.monotonic() + code.expires_in, 0
    while True:
        await wait_to_poll(max(interval, RETRY_FLOOR), deadline, stop)
        polls += 1
        form = {"grant_type": DEVICE_GRANT, "device_code": code.device_code, "resource": found.resource}
        headers = authenticate(client, form, found.issuer)
        status, answer = await http.post("device token", endpoint, form=form, headers=headers)
        if status == 200 and answer and isinstance(answer.get("access_token"), str):
            http.secret(answer["access_token"], answer.get("refresh_token"))
            return make_token(answer, found, client, scopes, None)
        error = (answer or {}).get("error")
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval = min(interval + SLOW_DOWN, MAX_INTERVAL)
            http.step("device", f"the server asks to poll more slowly: every {interval:g} s", polls=polls)
            continue
        if error == "access_denied":
            raise AuthorizationError(f"authorization denied at {found.issuer} (the device code was refused)")
        if error == "expired_token":
            raise AuthorizationError("the device code expired before it was approved: connect again for a new one")
        raise oauth_error("device token", status, answer)


async def wait_to_poll(interval: float, deadline: float, stop: Callable[[], str | None]) -> None:
    """Wait `interval` seconds, looking at `stop()` meanwhile; raise once given up or expired."""
    until = time.monotonic() + interval
    while True:
        why = stop()
        if why is not None:
            raise AuthorizationError(why)
        now = time.monotonic()
        if now >= deadline:
            raise AuthorizationError("the device code expired before it was approved: connect again for a new one")
        if now >= until:
            return
        await anyio.sleep(min(WAKE, until - now, deadline - now))


def _strings(answer: dict[str, Any], *names: str) -> bool:
    return all(isinstance(answer.get(name), str) and answer[name] for name in names)


def _seconds(value: Any, default: float, most: float) -> float:
    """A duration the server gave, at most `most`; `default` when it gave none, or a negative one."""
    seconds = seconds_within(value, 0.0, most)
    negative = isinstance(value, (int, float)) and value < 0
    return default if seconds is None or negative else seconds
