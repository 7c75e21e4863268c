"""A connection's prompts and argument completion (`completion/complete`). Plain
functions that `Connection` lists in its class body; each takes the connection as `self`.

Every method waits in the caller's thread, which wakes every few hundredths of a second
to show what the session thread recorded for it (progress, log messages, questions from
the server) in the caller's cell; Ctrl-C or a timeout cancels the request on the server.
Each has an awaitable twin that waits without blocking the caller's event loop.
"""

from __future__ import annotations

from typing import Any

from ..calls import feature_steps as steps
from ..calls.exchange import adrive, drive
from ..calls.feature_state import Featured
from ..results.objects import Listing, PromptResult

# ----- prompts and completion -----


def list_prompts(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_prompts(self.feature_state, refresh))


async def alist_prompts(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_prompts(self.feature_state, refresh))


def get_prompt(
    self: Featured,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    timeout: float | None = None,
    log_level: str | None = None,
) -> PromptResult:
    """A prompt's messages; required arguments are checked first (values are sent as strings)."""
    return drive(self.feature_state, steps.get_prompt(self.feature_state, name, arguments, timeout, log_level))


async def aget_prompt(
    self: Featured,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    timeout: float | None = None,
    log_level: str | None = None,
) -> PromptResult:
    return await adrive(self.feature_state, steps.get_prompt(self.feature_state, name, arguments, timeout, log_level))


def complete(
    self: Featured,
    ref: str | dict[str, Any],
    argument: str,
    value: str = "",
    context: dict[str, str] | None = None,
    *,
    timeout: float | None = None,
) -> list[str]:
    """`completion/complete`: `ref` is "prompt:NAME", "resource:URI_TEMPLATE" or a ref dict;
    `timeout` bounds the wait (Tab completion uses a short one)."""
    return drive(self.feature_state, steps.complete(self.feature_state, ref, argument, value, context, timeout))


async def acomplete(
    self: Featured,
    ref: str | dict[str, Any],
    argument: str,
    value: str = "",
    context: dict[str, str] | None = None,
    *,
    timeout: float | None = None,
) -> list[str]:
    return await adrive(self.feature_state, steps.complete(self.feature_state, ref, argument, value, context, timeout))
