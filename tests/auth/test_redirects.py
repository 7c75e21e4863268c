"""Which redirect URI a flow uses: the callback of the Jupyter server the process runs under
(announced by the server extension in the runtime directory), at the public origin the
environment or the setting gives, else the loopback default. The process asking is a real
child of this one, and this test announces itself as its Jupyter server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook.auth.handoff import announce

ASK = """
import json, sys
from mcp_notebook.auth.config import OAuth
from mcp_notebook.auth.flow import OAuthFlow
from mcp_notebook.auth.identity import ClientIdentity
from mcp_notebook.auth.redirects import jupyter_callback
public = sys.argv[1] or None
def flow(**options):
    return OAuthFlow("http://127.0.0.1:1/mcp", OAuth(remember=False, public_url=public, **options),
                     events=lambda *a, **k: None, secret=lambda s: None).redirect_uri()
def used(**options):  # by a client registered with both redirect URIs, and by one registered beforehand
    made = OAuthFlow("http://127.0.0.1:1/mcp", OAuth(remember=False, public_url=public, **options),
                     events=lambda *a, **k: None, secret=lambda s: None)
    both = [made.redirect_uri(), made.options.redirect_uri]
    return [made._redirect_for(ClientIdentity("c", "none", "registered", redirect_uris=both)),
            made._redirect_for(ClientIdentity("app", "none", "pre-registered"))]
print(json.dumps({"callback": jupyter_callback(public), "flow": flow(),
                  "given": flow(redirect_uri="http://127.0.0.1:5000/cb"), "own": flow(authorize=lambda url: url),
                  "used": used()}))
"""
HUB = ("JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_PUBLIC_URL", "JUPYTERHUB_PUBLIC_HUB_URL")


def ask(runtime: Path, public: str = "", **env: str) -> dict[str, str | None]:
    """What a child of this process (as a kernel is of its server) would use."""
    environment = {key: value for key, value in os.environ.items() if key not in HUB}
    environment |= {"JUPYTER_RUNTIME_DIR": str(runtime), **env}
    done = subprocess.run([sys.executable, "-c", ASK, public], env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    return tmp_path / "runtime"


def test_without_a_server_announced_the_loopback_stands(runtime: Path) -> None:
    found = ask(runtime, JUPYTERHUB_SERVICE_PREFIX="/user/a/", JUPYTERHUB_PUBLIC_URL="https://hub.example/user/a/")
    loopback = "http://127.0.0.1:33418/callback"
    assert found == {"callback": None, "flow": loopback, "given": "http://127.0.0.1:5000/cb", "own": loopback,
                     "used": [loopback, loopback]}  # fmt: skip


def test_a_plain_server_is_reached_at_its_own_url_or_the_public_one_set(runtime: Path) -> None:
    assert announce("http://localhost:8888/lab-base/", "/lab-base/", runtime) is not None
    found = ask(runtime)
    assert found["callback"] == found["flow"] == "http://localhost:8888/lab-base/mcp-notebook/oauth/callback"
    assert found["given"] == "http://127.0.0.1:5000/cb"  # a redirect URI of the user's own wins
    assert found["own"] == "http://127.0.0.1:33418/callback"  # so does an authorize callback: it says where it ends
    # a client registered beforehand (or by an older kernel) was not registered with the callback
    assert found["used"] == [found["callback"], "http://127.0.0.1:33418/callback"]
    tunnel = ask(runtime, "https://tunnel.example:9443/ignored/path")
    assert tunnel["callback"] == "https://tunnel.example:9443/lab-base/mcp-notebook/oauth/callback"


def test_a_hub_server_is_reached_at_the_hubs_public_url_under_its_prefix(runtime: Path) -> None:
    assert announce("http://127.0.0.1:41234/user/a/", "/user/a/", runtime) is not None
    prefix = {"JUPYTERHUB_SERVICE_PREFIX": "/hub-x/user/a/"}
    public = ask(runtime, JUPYTERHUB_PUBLIC_URL="https://hub.example/hub-x/user/a/", **prefix)
    assert public["flow"] == "https://hub.example/hub-x/user/a/mcp-notebook/oauth/callback"
    hub_only = ask(runtime, JUPYTERHUB_PUBLIC_HUB_URL="https://hub.example:8443/hub-x/hub/", **prefix)
    assert hub_only["flow"] == "https://hub.example:8443/hub-x/user/a/mcp-notebook/oauth/callback"
    # the server's own URL is the hub's internal one, which no browser reaches: not guessed at
    assert ask(runtime, JUPYTERHUB_PUBLIC_URL="", **prefix)["flow"] == "http://127.0.0.1:33418/callback"
    assert ask(runtime, "https://set.example", **prefix)["flow"] == "https://set.example/hub-x/user/a/mcp-notebook/oauth/callback"
