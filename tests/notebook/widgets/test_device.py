"""The device grant's widget, built without a kernel: server text escaped, a link that is not
http(s) not drawn, the code gone once the flow ends, and no code or link in the snapshot."""

from __future__ import annotations

from mcp_notebook.auth.device import DeviceCode
from mcp_notebook.notebook.widgets.device import DeviceCodeWidget

MARKUP = "<img src=x onerror=alert(1)>"


def test_server_text_is_escaped_and_only_web_links_are_drawn() -> None:
    code = DeviceCode(MARKUP, f"javascript:{MARKUP}", None, 600.0, 5.0, "https://as.example", "dc-secret-value")
    form = DeviceCodeWidget(code, None)
    drawn = form.header.value + form.code_box.value + form.link.value + form.steps.value
    assert MARKUP not in drawn and "&lt;img" in drawn
    assert form.link.value == ""  # javascript: is no page to open
    assert "dc-secret-value" not in drawn + repr(code)


def test_the_outcome_replaces_the_code_and_the_snapshot_keeps_neither_code_nor_link() -> None:
    code = DeviceCode(
        "BCDF-GHJK",
        "https://as.example/device",
        "https://as.example/device?user_code=BCDF-GHJK",
        600.0,
        5.0,
        "https://as.example",
        "dc-1234",
    )
    form = DeviceCodeWidget(code, None)
    assert "BCDF-GHJK" in form.code_box.value and 'href="https://as.example/device?user_code=BCDF-GHJK"' in form.link.value
    assert not form.cancelled()
    form.cancel_button.click()
    assert form.cancelled()
    form.finish("authorization cancelled", True)
    assert form.closed and form.code_box.value == "" and form.link.value == "" and form.cancel_button.disabled
    assert form.text().startswith("Not authorized at as.example") and "authorization cancelled" in form.text()
    assert "BCDF-GHJK" not in form.html() + form.text()


def test_mcp_connect_auth_device_asks_for_the_device_grant() -> None:
    from argparse import Namespace

    from mcp_notebook import OAuth
    from mcp_notebook.notebook.magics.session import _auth_option

    options = {"client_id": None, "client_secret_env": None, "client_metadata_url": None, "private_key_file": None, "scope": None}
    assert _auth_option(Namespace(auth="device", **options)) == OAuth(grant="device")
    chosen = _auth_option(Namespace(auth="device", **{**options, "client_id": "cli", "scope": ["a"]}))
    assert (chosen.grant, chosen.client_id) == ("device", "cli")
    assert _auth_option(Namespace(auth="auto", **options)) == "auto"
