"""The `auth/*` client scenarios of the official conformance suite, on the public Python API only.

`run(scenario, context, url)` connects to the scenario's server with the `OAuth` options its
context asks for (the suite hands over credentials in MCP_CONFORMANCE_CONTEXT: a client id and
secret, a private key, an identity provider's ID token, a workload's JWT), lists the tools and
calls each one, and answers an exit status: 0 when all of that worked. The authorization URL
is followed without a browser (the suite's authorization servers redirect at once), and no
token outlives the scenario (`remember=False`: every scenario is a new server on a reused port).

Run on its own it is a conformance `--command`: the scenario and its context come from the
environment, the server URL is the last argument; AUTH_SCENARIOS_PROBE_TIMEOUT shortens the
era probe's timeout, to make a loaded machine's slow authorization certain.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urljoin

import mcp_notebook

CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the suite's own client metadata document
REDIRECT_URI = "http://127.0.0.1:33418/callback"
MAX_REDIRECTS = 10
TIMEOUT = 30.0


class _Stop(urllib.request.HTTPRedirectHandler):
    """Follow no redirect: each one is looked at, to stop at the one back to us."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def follow_authorization(url: str) -> str:
    """The `authorize` callback: follow the authorization URL's redirects to our redirect URI."""
    opener = urllib.request.build_opener(_Stop)
    for _ in range(MAX_REDIRECTS):
        try:
            with opener.open(url, timeout=TIMEOUT) as response:
                raise RuntimeError(f"the authorization page answered {response.status} without redirecting")
        except urllib.error.HTTPError as exc:
            location = exc.headers.get("location")
            if exc.code not in (301, 302, 303, 307, 308) or not location:
                raise RuntimeError(f"the authorization page answered HTTP {exc.code}") from None
        url = urljoin(url, location)
        if url.startswith(REDIRECT_URI):
            return url
    raise RuntimeError(f"more than {MAX_REDIRECTS} redirects from the authorization page")


def oauth_options(scenario: str, context: dict[str, Any]) -> mcp_notebook.OAuth:
    """What the scenario asks of a client, from the credentials its context holds."""
    options: dict[str, Any] = {
        "authorize": follow_authorization,
        "redirect_uri": REDIRECT_URI,
        "remember": False,
    }
    if context.get("client_id"):
        options["client_id"] = context["client_id"]
    if context.get("client_secret"):
        options["client_secret"] = context["client_secret"]
    if context.get("private_key_pem"):
        options["private_key"] = context["private_key_pem"]
        options["signing_algorithm"] = context.get("signing_algorithm")
    if context.get("idp_id_token"):
        options["cross_app"] = mcp_notebook.CrossAppAccess(
            context["idp_id_token"], context["idp_token_endpoint"], idp_client_id=context.get("idp_client_id")
        )
    if context.get("valid_jwt"):  # workload identity federation: the workload's own JWT
        options["assertion"] = context["valid_jwt"]
    if scenario == "auth/basic-cimd":
        options["client_metadata_url"] = CIMD_URL
    return mcp_notebook.OAuth(**options)


def run(scenario: str, context: dict[str, Any], url: str, **options: Any) -> int:
    """Connect with OAuth (and `options` for connect), list the tools, call each; 0 when all of it
    worked, else 1 (and why, on stderr)."""
    auth = oauth_options(scenario, context)
    try:
        with mcp_notebook.connect(url, name="conformance-auth", auth=auth, timeout=TIMEOUT, **options) as conn:
            tools = list(conn.list_tools()) if "tools" in conn.server_capabilities else []
            for tool in tools:
                conn.call_tool(tool["name"], {})
            print(f"{scenario}: {len(tools)} tools, each called")
    except mcp_notebook.McpNotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    probe_timeout = os.environ.get("AUTH_SCENARIOS_PROBE_TIMEOUT")
    options = {"probe_timeout": float(probe_timeout)} if probe_timeout else {}
    return run(scenario, context, sys.argv[-1], **options)


if __name__ == "__main__":
    sys.exit(main())
