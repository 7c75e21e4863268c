"""`python -m mcp_notebook`: a small command-line MCP client over the same API as the magics.

It connects, prints what the server is, lists its tools, and calls the tools you name.
`python -m mcp_notebook compare CASSETTE [--junit FILE] -- COMMAND` (or a URL) asks a live
server what a saved session asked and prints every difference; exit status 0 when there
is none, 1 when there are, 2 when it could not compare.
Under the official conformance suite (which sets MCP_CONFORMANCE_SCENARIO and passes the
server URL last) it calls every tool the scenario's server offers, and takes the client
credentials the suite hands over in MCP_CONFORMANCE_CONTEXT (a workload's JWT among them).

A server that wants OAuth is authorized through the same `authorize=` callback a program
would pass: it follows the authorization URL's redirects without a browser (through the
connection's proxy, trusting its roots) and hands back the URL they end on; where a page
wants a person, it prints the link and reads the URL pasted back (on a terminal). With
`--device`, the device grant: it prints the code and the page to enter it at, and polls
until approved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from .api.cassettes.compare import compare
from .api.connecting.connect import connect
from .auth.config import DEFAULT_REDIRECT_URI, CrossAppAccess, OAuth
from .base.errors import AuthorizationError, McpNotebookError
from .transports.http_client import HttpSettings, sync_client

MAX_REDIRECTS = 10
DOCTOR = "Connect step by step and say where it fails and what to try."
COMPARE = "Ask a live server what a cassette (a saved session) asked; print every answer that differs."
# The subcommands, for the main --help (each has its own --help); `main` dispatches on the first word.
COMMANDS = f"""other commands (each with its own --help):
  python -m mcp_notebook doctor TARGET
      {DOCTOR}
  python -m mcp_notebook compare CASSETTE TARGET
      {COMPARE}"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook",
        description="Connect to an MCP server, list its tools and call some of them (or doctor, or compare: see the end).",
        epilog=COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", nargs="+", help="a server URL, or a server command (put -- before it)")
    parser.add_argument("--call", action="append", default=[], metavar="TOOL", help="call this tool (repeatable)")
    parser.add_argument("--arguments", default="{}", metavar="JSON", help="arguments for the tools called")
    parser.add_argument("--all-tools", action="store_true", help="call every tool, with arguments made from its schema")
    parser.add_argument("--header", action="append", default=[], metavar="'K: V'", help="an HTTP header (repeatable)")
    parser.add_argument("--bearer-token-env", metavar="VAR", help="environment variable holding a bearer token to send")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    parser.add_argument("--trace", action="store_true", help="print every frame and transport event at the end")
    parser.add_argument(
        "--proxy", metavar="URL", help="send HTTP requests through this proxy ('' for none; default: HTTP(S)_PROXY)"
    )
    parser.add_argument("--cacert", metavar="PEM_FILE", help="trust the CA certificates in this file (default: the system's)")
    auth = parser.add_argument_group("OAuth (when the server answers 401)")
    auth.add_argument("--no-auth", action="store_true", help="never authorize")
    auth.add_argument("--client-id", help="a client registered beforehand with the authorization server")
    auth.add_argument("--client-secret-env", metavar="VAR", help="environment variable holding that client's secret")
    auth.add_argument("--client-metadata-url", metavar="URL", help="this client's Client ID Metadata Document (https)")
    auth.add_argument("--private-key", metavar="PEM_FILE", help="authenticate the client with a JWT signed by this key")
    auth.add_argument("--scope", action="append", metavar="SCOPE", help="ask for this scope (repeatable)")
    auth.add_argument("--redirect-uri", default=DEFAULT_REDIRECT_URI, help=f"default {DEFAULT_REDIRECT_URI}")
    auth.add_argument("--device", action="store_true", help="the device grant: print a code to enter on any device")
    auth.add_argument(
        "--assertion-file", metavar="FILE", help="a workload's identity JWT, read afresh for each grant (RFC 7523 JWT bearer)"
    )
    return parser


def follow_authorization(redirect_uri: str, http: HttpSettings) -> Any:
    """An `authorize` callback without a browser: follow the authorization URL's redirects until
    one goes to `redirect_uri`, and hand that URL back. A page that wants a person (a login
    form) is shown on the terminal, and the URL the browser ends on is read back."""

    def authorize(url: str) -> str:
        with sync_client(http, timeout=30.0) as client:
            for _ in range(MAX_REDIRECTS):
                response = client.get(url)
                location = response.headers.get("location")
                if not response.is_redirect or not location:
                    break
                url = urljoin(url, location)
                if url.startswith(redirect_uri):
                    return url
        if sys.stdin.isatty():
            print(f"Authorize in a browser, then paste the URL it ends on:\n  {url}", file=sys.stderr)
            return input("URL: ")
        raise AuthorizationError("the authorization page wants a person (no redirect back), and there is no terminal to ask in")

    return authorize


def auth_option(args: argparse.Namespace, context: dict[str, Any]) -> Any:
    """The `auth=` of connect: from the options, or from the conformance suite's context."""
    if args.no_auth or args.bearer_token_env:
        return None  # never authorize, or a credential of the caller's
    secret = os.environ.get(args.client_secret_env) if args.client_secret_env else None
    key = Path(args.private_key).read_text() if args.private_key else None
    assertion: Any = context.get("valid_jwt")  # the suite's workload identity JWT
    if args.assertion_file:
        assertion = Path(args.assertion_file).read_text  # re-read for each grant: such tokens rotate
    cross_app = None
    if context.get("idp_id_token"):
        cross_app = CrossAppAccess(
            context["idp_id_token"], context["idp_token_endpoint"], idp_client_id=context.get("idp_client_id")
        )
    return OAuth(
        client_id=context.get("client_id") or args.client_id,
        client_secret=context.get("client_secret") or secret,
        client_metadata_url=args.client_metadata_url,
        scopes=args.scope,
        redirect_uri=args.redirect_uri,
        private_key=context.get("private_key_pem") or key,
        signing_algorithm=context.get("signing_algorithm"),
        cross_app=cross_app,
        assertion=assertion,
        grant="device" if args.device else "auto",
        authorize=follow_authorization(args.redirect_uri, HttpSettings(proxy=args.proxy, verify=args.cacert or True)),
        remember=not os.environ.get("MCP_CONFORMANCE_SCENARIO"),  # each scenario is a new server on a reused port
    )


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments a tool's input schema accepts: defaults where given, else a plain value of each type."""
    plain = {"string": "example", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    arguments: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            arguments[name] = prop["default"]
        elif prop.get("enum"):
            arguments[name] = prop["enum"][0]
        else:
            kind = prop.get("type")
            arguments[name] = plain.get(kind[0] if isinstance(kind, list) else kind, "example")
    return arguments


def compare_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook compare",
        description=COMPARE,
    )
    parser.add_argument("cassette", help="a trace saved with conn.trace.to_jsonl")
    parser.add_argument("target", nargs="+", help="the live server: a URL, or a command (put -- before it)")
    parser.add_argument("--junit", metavar="FILE", help="write a JUnit-style XML summary to FILE (for CI)")
    parser.add_argument("--ignore", action="append", default=[], metavar="FIELD", help="also ignore a key name or JSON pointer")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    args = parser.parse_args(argv)
    target: Any = args.target[0] if len(args.target) == 1 and "://" in args.target[0] else args.target
    try:
        comparison = compare(args.cassette, target, also_ignore=args.ignore, timeout=args.timeout)
    except McpNotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(comparison)
    if args.junit:
        comparison.to_junit(args.junit)
    return 0 if comparison.ok else 1


def doctor_main(argv: list[str]) -> int:
    """`python -m mcp_notebook doctor TARGET`: the connection doctor's checklist; 0 when it is ok."""
    from .diagnosis.context import DEFAULT_STEP_TIMEOUT
    from .diagnosis.run import doctor

    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook doctor",
        description=DOCTOR,
    )
    parser.add_argument("target", nargs="+", help="a server URL, a configured server's name, or a command (put -- before it)")
    parser.add_argument("--header", action="append", default=[], metavar="'K: V'", help="an HTTP header (repeatable)")
    parser.add_argument("--era", choices=["auto", "legacy", "modern"], default="auto", help="the protocol era (default: auto)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_STEP_TIMEOUT, help="seconds each step may take (default 10)")
    parser.add_argument("--no-auth", action="store_true", help="never authorize")
    args = parser.parse_args(argv)
    target: Any = args.target[0] if len(args.target) == 1 and ("://" in args.target[0] or "--" not in argv) else args.target
    headers = {key.strip(): value.strip() for key, _, value in (h.partition(":") for h in args.header)}
    options: dict[str, Any] = {"era": args.era, "auth": None if args.no_auth else "auto"}
    if headers:
        options["headers"] = headers
    try:
        diagnosis = doctor(target, timeout=args.timeout, **options)
    except McpNotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0 if diagnosis.ok else 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        return compare_main(argv[1:])
    if argv[:1] == ["doctor"]:
        return doctor_main(argv[1:])
    args = _parser().parse_args(argv)
    target: Any = args.target[0] if len(args.target) == 1 and "://" in args.target[0] else args.target
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    headers = dict(h.split(":", 1) for h in args.header)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}") if scenario else {}
    try:
        call_arguments = json.loads(args.arguments)
    except ValueError as exc:
        print(f"error: --arguments is not JSON: {exc}", file=sys.stderr)
        return 2
    try:
        with connect(
            target,
            name="cli",
            timeout=args.timeout,
            headers={k.strip(): v.strip() for k, v in headers.items()} or None,
            bearer_token_env=args.bearer_token_env,
            elicitation="defaults",
            auth=auth_option(args, context) if isinstance(target, str) else None,  # OAuth is for URLs
            proxy=args.proxy,
            verify=args.cacert or True,
        ) as conn:  # elicitation: accept with the schema's defaults (SEP-1034)
            info = conn.server_info or {}
            print(
                f"connected: {info.get('name', '?')} {info.get('version', '')} over {conn.health.transport}, "
                f"protocol {conn.protocol_version}"
            )
            tools = conn.request("tools/list").get("tools", []) if "tools" in conn.server_capabilities else []
            print("tools:", ", ".join(tool["name"] for tool in tools) or "none")
            calls = [(name, call_arguments) for name in args.call]
            if args.all_tools or (scenario and not args.call):
                calls += [(tool["name"], example_arguments(tool.get("inputSchema") or {})) for tool in tools]
            for name, arguments in calls:
                result = conn.request("tools/call", {"name": name, "arguments": arguments})
                print(f"{name}: {json.dumps(result)}")
            if args.trace:
                for entry in conn.trace.entries():
                    print(json.dumps(entry.to_record(), default=str))
    except McpNotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
