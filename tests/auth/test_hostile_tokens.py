"""Numbers a token endpoint makes up: an `expires_in` of 1e300 (or 10**400, or negative, NaN,
text, true) becomes an expiry a clock can show, and `%mcp auth` says it in one line; a device
grant's `interval` and `expires_in` are kept to bounds too.

End to end against the demo server's OAuth mode, whose `token_seconds` is answered as the
token's `expires_in` as given (an integer of any size); the values no server of ours can be
made to send (NaN, text, true) through `make_token`, which every grant's answer goes through.
"""

from __future__ import annotations

import math
import time
from typing import Any

import httpx2
import pytest

import mcp_notebook
from mcp_notebook import OAuth, demo_server
from mcp_notebook.api.connecting.authorization import auth_status
from mcp_notebook.auth.device import DEFAULT_INTERVAL, DEFAULT_LIFETIME, MAX_INTERVAL, _seconds
from mcp_notebook.auth.discovery import Discovered
from mcp_notebook.auth.grants import MAX_LIFETIME, Token, make_token
from mcp_notebook.auth.identity import ClientIdentity
from mcp_notebook.demo_server import OAuthSettings
from mcp_notebook.notebook.magics.auth import format_status

FOUND = Discovered("https://mcp.example/mcp", "https://as.example", {"token_endpoint": "x"}, None, legacy=False)
CLIENT = ClientIdentity("client-1", "none", "registered")


def browser(url: str) -> str:
    """The user's browser: the demo's authorization server approves at once and redirects."""
    with httpx2.Client(follow_redirects=False, timeout=30.0) as client:
        response = client.get(url)
    assert response.is_redirect, response.text
    return response.headers["location"]


def test_a_token_said_to_last_forever_is_taken_to_last_a_year_and_auth_shows_it() -> None:
    process, url = demo_server.start_http(oauth=OAuthSettings(token_seconds=10**300))
    with process, mcp_notebook.connect(url, name="forever", auth=OAuth(authorize=browser, remember=False)) as conn:
        assert conn.call_tool("add", {"a": 1, "b": 2}).structured == {"sum": 3}
        status = auth_status(conn)
        assert status is not None and status.expires_at is not None
        assert time.time() + MAX_LIFETIME - 600 <= status.expires_at <= time.time() + MAX_LIFETIME  # a year, not less
        shown = format_status(status)
        [expires] = [line for line in shown.splitlines() if line.strip().startswith("expires")]
        assert "min (" in expires and "UTC)" in expires


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [
        (1e300, MAX_LIFETIME),
        (math.inf, MAX_LIFETIME),
        pytest.param(10**400, MAX_LIFETIME, id="10**400"),
        (-5, 0.0),
        (-math.inf, 0.0),
        (math.nan, None),
        ("soon", None),
        ("1e999", None),
        (True, None),
        (None, None),
        ({"seconds": 5}, None),
        ("3600", 3600.0),  # written as text by some token endpoints
        (3600, 3600.0),
    ],
)
def test_any_expires_in_makes_a_token_whose_expiry_a_clock_can_show(expires_in: Any, lifetime: float | None) -> None:
    before = time.time()
    token = make_token({"access_token": "at-1234", "expires_in": expires_in}, FOUND, CLIENT, None, None)
    after = time.time()
    if lifetime is None:
        assert token.expires_at is None
    else:
        assert token.expires_at is not None and before + lifetime <= token.expires_at <= after + lifetime
        assert time.gmtime(token.expires_at)  # what `%mcp auth` does with it
    line = format_status(
        mcp_notebook.api.connecting.authorization.AuthStatus(
            "c", "https://mcp.example/mcp", True, "https://as.example", "client-1", "registered", (), token.expires_at, False, 1
        )
    )
    assert "expires" in line


def test_a_saved_token_from_before_the_clamp_is_clamped_as_it_loads() -> None:
    saved = {"access_token": "at-1234", "resource": "r", "issuer": "i", "client_id": "c", "scopes": (), "expires_at": 1e300}
    assert Token(**saved).expires_at is not None and Token(**saved).expires_at <= time.time() + MAX_LIFETIME  # type: ignore[operator]
    assert Token(**{**saved, "expires_at": math.nan}).expires_at is None


@pytest.mark.parametrize(
    ("value", "default", "most", "expected"),
    [
        (1e300, DEFAULT_INTERVAL, MAX_INTERVAL, MAX_INTERVAL),
        pytest.param(10**400, DEFAULT_LIFETIME, 3600.0, 3600.0, id="10**400"),
        (-1, DEFAULT_INTERVAL, MAX_INTERVAL, DEFAULT_INTERVAL),
        (math.nan, DEFAULT_INTERVAL, MAX_INTERVAL, DEFAULT_INTERVAL),
        (False, DEFAULT_INTERVAL, MAX_INTERVAL, DEFAULT_INTERVAL),
        (7, DEFAULT_INTERVAL, MAX_INTERVAL, 7.0),
    ],
)
def test_a_device_codes_interval_and_lifetime_are_bounded(value: Any, default: float, most: float, expected: float) -> None:
    assert _seconds(value, default, most) == expected


def test_an_endpoint_answer_keeps_its_tokens_out_of_its_repr():
    from mcp_notebook.auth.exchange import Answer

    answer = Answer(200, {"access_token": "tok-" + "s3cr3t" * 3, "refresh_token": "ref-" + "s3cr3t" * 3})
    assert "s3cr3t" not in repr(answer) and "200" in repr(answer)
