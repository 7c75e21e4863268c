"""The OAuth-protected mode's settings: one dataclass for the command line, `command()` and `demo()`.

Checked once, here, so a typo or a nonsense value fails before a server starts.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields

BASE_SCOPE = "demo:tools"  # every MCP request needs it
STEP_UP_SCOPE = "demo:admin"  # the step-up tool needs it too
DEVICE_FAULTS = ("slow", "deny", "expire", "pending", "later")


@dataclass(frozen=True)
class OAuthSettings:
    """How the demo's authorization server behaves, fault switches included.

    `token_seconds`: access tokens expire after N seconds (default one hour).
    `token_calls`: an access token is good for N `tools/call` requests, then 401 (pings and
    listings do not count, so a lesson's expiry does not depend on timing).
    `step_up_tool`: calling this tool needs the extra scope `demo:admin` (403 insufficient_scope).
    `refreshes`: the first N refresh requests succeed, every later one fails (invalid_grant),
    so the client has to authorize afresh.
    `device_interval`: the polling interval the device authorization grant asks for (default 5 s;
    0 for tests that should not wait).
    `device_fault`: what the device grant's polls meet: `slow` (a `slow_down` first), `deny`
    (`access_denied`), `expire` (`expired_token`), `pending` (never approved), `later` (only the
    first code approved). See `_device`.
    `issued_log`: a file that gets every secret issued (codes, tokens, client secrets), one per
    line, for tests that check none of them shows anywhere.
    """

    token_seconds: int | None = None
    token_calls: int | None = None
    step_up_tool: str | None = None
    refreshes: int | None = None
    device_interval: int | None = None
    device_fault: str | None = None
    issued_log: str | None = None

    def __post_init__(self) -> None:
        for name in ("token_seconds", "token_calls", "refreshes", "device_interval"):
            value, minimum = getattr(self, name), 0 if name in ("refreshes", "device_interval") else 1
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
                raise ValueError(f"{name} must be an integer of at least {minimum}, not {value!r}")
        if self.step_up_tool is not None and not (isinstance(self.step_up_tool, str) and self.step_up_tool):
            raise ValueError(f"step_up_tool must be a tool's name, not {self.step_up_tool!r}")
        if self.device_fault is not None and self.device_fault not in DEVICE_FAULTS:
            raise ValueError(f"device_fault must be one of {', '.join(DEVICE_FAULTS)}, not {self.device_fault!r}")

    def argv(self) -> list[str]:
        """The command-line flags that give these settings (`--oauth` first)."""
        args = ["--oauth"]
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is not None:
                args += ["--" + spec.name.replace("_", "-"), str(value)]
        return args


NAMES = tuple(spec.name for spec in fields(OAuthSettings))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "OAuth-protected mode (HTTP only)",
        "--oauth protects /mcp with bearer tokens from an authorization server in the same process that "
        "approves every request at once (it is a demo): discovery, registration, PKCE, refresh, the device grant.",
    )
    group.add_argument("--oauth", action="store_true", help="require OAuth access tokens (HTTP only)")
    group.add_argument("--token-seconds", type=int, metavar="N", help="access tokens expire after N seconds")
    group.add_argument("--token-calls", type=int, metavar="N", help="an access token is good for N tools/call requests")
    group.add_argument("--step-up-tool", metavar="TOOL", help=f"calling TOOL needs the scope {STEP_UP_SCOPE} too (403 step-up)")
    group.add_argument("--refreshes", type=int, metavar="N", help="the first N refreshes succeed, later ones fail")
    group.add_argument("--device-interval", type=int, metavar="N", help="the device grant asks clients to poll every N s")
    group.add_argument(
        "--device-fault", choices=DEVICE_FAULTS, help="the device grant's polls meet slow_down, denial, expiry or wait forever"
    )
    group.add_argument("--issued-log", metavar="FILE", help="append every secret issued to FILE (for tests)")


def from_args(args: argparse.Namespace) -> OAuthSettings | None:
    """The settings the parsed command line asks for; None without --oauth (ValueError for a flag without it)."""
    given = {name: getattr(args, name) for name in NAMES if getattr(args, name) is not None}
    if not args.oauth:
        if given:
            raise ValueError(f"--{next(iter(given)).replace('_', '-')} needs --oauth")
        return None
    if args.transport != "http":
        raise ValueError("--oauth needs --transport http")
    return OAuthSettings(**given)
