"""The seam through which an HTTP transport is authorized: an `AuthHook` it consults.

The transport knows no OAuth. It asks the hook for the credential headers of each request
(`Authorization`, and `DPoP` for a token bound to a key; the hook gives them only for the
resource its token was issued for, and a DPoP proof is made for that one method and URL, so
the transport asks again for every request it sends), and shows it each 401
or 403 answer: the hook may authorize (discovery, the user, the token endpoint) and then
say to send the request again. The OAuth client itself lives in the `auth` layer above.
"""

from __future__ import annotations

from typing import Protocol

import anyio.abc
import httpx2


class AuthHook(Protocol):
    """What an HTTP transport asks of whatever authorizes its requests."""

    def attach(self, task_group: anyio.abc.TaskGroup | None) -> None:
        """The transport is open: flows may run in `task_group` (outliving the request that started
        them). None: the transport is closing, and its task group is gone: start nothing there."""

    def credentials(self, method: str, url: str) -> dict[str, str]:
        """The credential headers for one `method` request to `url` ({} for none)."""
        ...

    async def retry(self, response: httpx2.Response, attempt: int) -> bool:
        """After a 401 or 403: authorize if that can help; True to send the request again.

        `attempt` counts the times this request was sent again already. Failures raise
        `AuthorizationError` (a `TransportError`)."""
        ...

    async def outwait_user(self) -> bool:
        """While a flow runs, wait until it is over; True if there was such a wait. A request's
        deadline does not count it: a person in a browser takes the time they take (the flow's
        own exchanges have their own timeouts)."""
        ...

    async def aclose(self) -> None:
        """Release what the hook holds (its own HTTP client); the transport is closing."""
