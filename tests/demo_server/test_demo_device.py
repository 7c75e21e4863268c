"""The demo's device authorization grant (RFC 8628) over plain HTTP: a client registered with
no redirect asks for a device code, polls, meets `authorization_pending`, gets tokens good for
`/mcp`; and each fault switch (slow_down, denial, expiry, never approved).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from support.demo_wire import INITIALIZE, MCP_HEADERS

from mcp_notebook import demo_server
from mcp_notebook.demo_server import OAuthSettings

DEVICE = "urn:ietf:params:oauth:grant-type:device_code"


def started(**settings: Any) -> Iterator[tuple[str, str]]:
    process, url = demo_server.start_http(oauth=OAuthSettings(device_interval=0, **settings))
    with process:
        yield url, url.removesuffix("/mcp")


@pytest.fixture
def device_server() -> Iterator[tuple[str, str]]:
    yield from started()


def device_code(http: httpx2.Client, origin: str, resource: str) -> tuple[str, dict[str, Any]]:
    registered = http.post(f"{origin}/register", json={"grant_types": [DEVICE], "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    answer = http.post(
        f"{origin}/device_authorization", data={"client_id": client_id, "scope": "demo:tools", "resource": resource}
    )
    assert answer.status_code == 200, answer.text
    return client_id, answer.json()


def poll(http: httpx2.Client, origin: str, client_id: str, code: str, resource: str) -> httpx2.Response:
    return http.post(
        f"{origin}/token", data={"grant_type": DEVICE, "device_code": code, "client_id": client_id, "resource": resource}
    )


def test_the_device_grant_step_by_step(device_server: tuple[str, str]) -> None:
    url, origin = device_server
    with httpx2.Client() as http:
        metadata = http.get(f"{origin}/.well-known/oauth-authorization-server").json()
        assert metadata["device_authorization_endpoint"] == f"{origin}/device_authorization"
        assert DEVICE in metadata["grant_types_supported"]
        client_id, issued = device_code(http, origin, url)
        assert issued["device_code"].startswith("demo-dc-") and issued["interval"] == 0
        assert issued["verification_uri"] == f"{origin}/device"
        assert issued["verification_uri_complete"] == f"{origin}/device?user_code={issued['user_code']}"
        assert http.get(issued["verification_uri_complete"]).json()["known"] is True

        first = poll(http, origin, client_id, issued["device_code"], url)
        assert (first.status_code, first.json()["error"]) == (400, "authorization_pending")
        second = poll(http, origin, client_id, issued["device_code"], url)
        assert second.status_code == 200, second.text
        token = second.json()
        assert token["scope"] == "demo:tools" and token["refresh_token"].startswith("demo-rt-")
        again = poll(http, origin, client_id, issued["device_code"], url)
        assert again.json()["error"] == "invalid_grant"  # a device code is good once

        answer = http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "authorization": f"Bearer {token['access_token']}"})
        assert answer.status_code == 200


def test_a_device_code_is_for_this_resource_and_its_own_client(device_server: tuple[str, str]) -> None:
    url, origin = device_server
    with httpx2.Client() as http:
        client_id, issued = device_code(http, origin, url)
        wrong = poll(http, origin, client_id, issued["device_code"], origin + "/other")
        assert wrong.json()["error"] == "invalid_target"
        other, _ = device_code(http, origin, url)
        assert poll(http, origin, other, issued["device_code"], url).json()["error"] == "invalid_grant"
        assert http.post(f"{origin}/register", json={}).json()["error"] == "invalid_redirect_uri"  # code clients still need one


@pytest.mark.parametrize(
    ("fault", "answers"),
    [
        ("slow", ["slow_down", "slow_down"]),  # polled again at once: slowed down again
        ("deny", ["authorization_pending", "access_denied"]),
        ("expire", ["authorization_pending", "expired_token"]),
        ("pending", ["authorization_pending", "authorization_pending", "authorization_pending"]),
    ],
)
def test_fault_switches(fault: str, answers: list[str]) -> None:
    for url, origin in started(device_fault=fault):
        with httpx2.Client() as http:
            client_id, issued = device_code(http, origin, url)
            got = [poll(http, origin, client_id, issued["device_code"], url).json().get("error") for _ in answers]
            assert got == answers


def test_later_approves_the_first_code_only() -> None:
    for url, origin in started(device_fault="later"):
        with httpx2.Client() as http:
            client_id, first = device_code(http, origin, url)
            other, second = device_code(http, origin, url)
            second_polls = [poll(http, origin, other, second["device_code"], url).json().get("error") for _ in range(3)]
            assert second_polls == ["authorization_pending"] * 3
            assert poll(http, origin, client_id, first["device_code"], url).json()["error"] == "authorization_pending"
            assert "access_token" in poll(http, origin, client_id, first["device_code"], url).json()


def test_the_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="device_fault"):
        OAuthSettings(device_fault="maybe")
    with pytest.raises(ValueError, match="device_interval"):
        OAuthSettings(device_interval=-1)
    assert OAuthSettings(device_interval=0, device_fault="deny").argv() == [
        "--oauth", "--device-interval", "0", "--device-fault", "deny"
    ]  # fmt: skip
