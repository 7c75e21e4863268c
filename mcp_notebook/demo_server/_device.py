"""The demo's device authorization grant (RFC 8628): a code to enter on any device, no redirect.

`/device_authorization` issues a device code (`demo-dc-`, a secret like the others), a user
code and the verification URIs (`/device`, and `/device?user_code=...`). It approves by itself
(it is a demo: nobody has to visit the page): the first poll of the token endpoint answers
`authorization_pending`, the second the tokens. The fault switch `device_fault` changes what
the polls meet: `slow` (the first poll answers `slow_down` instead: a client must then wait
5 s longer, and one that does not is slowed down again), `deny` (the second answers `access_denied`), `expire` (the second answers
`expired_token`), `pending` (never approved: pending until the code expires), `later` (the
first code approved as usual, every later one pending: a second authorization that hangs). A poll sooner
than the interval answers `slow_down`, as RFC 8628 section 3.5 allows.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from ._app import log
from ._oauth_settings import OAuthSettings

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
DEFAULT_INTERVAL = 5
LIFETIME = 600
SLOW_DOWN = 5  # seconds a slow_down adds to the interval (RFC 8628 section 3.5)
USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"  # no vowels, no look-alikes (RFC 8628 section 6.1)


class DeviceRefusal(Exception):
    """An OAuth error answer from the token endpoint for a device code."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error, self.description = error, description


@dataclass
class Pending:
    """One device code: who asked, for what, and how its polls went."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str
    user_code: str
    expires_at: float
    interval: int
    polls: int = 0
    last_poll: float = 0.0
    never: bool = False  # never approved (fault switch pending, or later)


class DeviceGrants:
    """The device codes issued and not yet used."""

    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self.pending: dict[str, Pending] = {}
        self.issued = 0  # device codes issued so far

    def start(self, issuer: str, device_code: str, client_id: str, scopes: tuple[str, ...], resource: str) -> dict[str, Any]:
        """A new device authorization: the answer of `/device_authorization`."""
        letters = "".join(secrets.choice(USER_CODE_LETTERS) for _ in range(8))
        user_code = f"{letters[:4]}-{letters[4:]}"
        interval = DEFAULT_INTERVAL if self.settings.device_interval is None else self.settings.device_interval
        self.issued += 1
        grant = Pending(client_id, scopes, resource, user_code, time.time() + LIFETIME, interval, never=self._never())
        self.pending[device_code] = grant
        log(f"oauth: device code issued to {client_id}, user code {user_code}")
        return {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": f"{issuer}/device",
            "verification_uri_complete": f"{issuer}/device?user_code={user_code}",
            "expires_in": LIFETIME,
            "interval": interval,
        }

    def poll(self, device_code: str, client_id: str) -> Pending:
        """One poll of the token endpoint: the approved grant, or a `DeviceRefusal`."""
        grant = self.pending.get(device_code)
        if grant is None or grant.client_id != client_id:
            raise DeviceRefusal("invalid_grant", "unknown, used or another client's device code")
        now = time.time()
        grant.polls += 1
        fault = self.settings.device_fault
        too_soon = grant.polls > 1 and now - grant.last_poll < grant.interval
        grant.last_poll = now
        if now >= grant.expires_at or (fault == "expire" and grant.polls >= 2):
            del self.pending[device_code]
            raise DeviceRefusal("expired_token", "the device code expired")
        if too_soon or (fault == "slow" and grant.polls == 1):
            grant.interval += SLOW_DOWN
            raise DeviceRefusal("slow_down", f"poll every {grant.interval} s at most")
        if grant.polls == 1 or grant.never:
            raise DeviceRefusal("authorization_pending", "the user has not approved yet")
        if fault == "deny":
            del self.pending[device_code]
            raise DeviceRefusal("access_denied", "the user said no (fault switch device_fault=deny)")
        del self.pending[device_code]
        log(f"oauth: device code approved for {client_id} after {grant.polls} polls")
        return grant

    def _never(self) -> bool:
        fault = self.settings.device_fault
        return fault == "pending" or (fault == "later" and self.issued > 1)

    def page(self, user_code: str | None) -> dict[str, Any]:
        """What `/device` answers: every code is approved by itself here."""
        known = any(grant.user_code == user_code for grant in self.pending.values())
        return {"user_code": user_code, "known": known, "note": "the demo approves every device code by itself"}
