"""Our conformance client: `@modelcontextprotocol/conformance` runs it as `client.py URL`.

It does what each client scenario's description asks, on the package's public API only
(`mcp_notebook.connect` and the connection's methods): it reads the scenario's name from
`MCP_CONFORMANCE_SCENARIO` and its context (the tool calls to make, credentials) from
`MCP_CONFORMANCE_CONTEXT` (JSON), and the server's URL from its last argument. Scenarios
named `auth/...` belong to `auth_scenarios.run` (beside this file). Its exit code is 0 when
the scenario ran as a client should run it (a client that refuses tampered content on purpose
has succeeded); anything else exits 1 with one line on stderr. Progress goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import mcp_notebook

Scenario = Callable[[str, dict[str, Any]], None]
SCENARIOS: dict[str, Scenario] = {}
SKILLS_VERIFY = ("sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter")


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def example(schema: Any) -> Any:
    """A value that satisfies a (simple) schema: its default, its first enum member, or one of its type."""
    if not isinstance(schema, dict):
        return "x"
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: example(properties.get(name)) for name in schema.get("required") or []}
    return {"integer": 1, "number": 1.5, "boolean": True, "array": [], "null": None}.get(kind, "x")


def accept(params: dict[str, Any]) -> dict[str, Any]:
    """An elicitation answered as a cooperative user would: every asked field filled (defaults first)."""
    schema = params.get("requestedSchema") or {}
    return {name: example(prop) for name, prop in (schema.get("properties") or {}).items()}


def connect(url: str, **options: Any) -> mcp_notebook.Connection:
    return mcp_notebook.connect(url, name="conformance", auth=None, **options)


@scenario("initialize", "json-schema-ref-no-deref")
def list_tools(url: str, context: dict[str, Any]) -> None:
    """The handshake (or probe), then the tools listed; a `$ref` in a schema is never fetched."""
    with connect(url) as conn:
        say(f"{conn.era} {conn.protocol_version}: tools {[t['name'] for t in conn.list_tools()]}")


@scenario("tools_call")
def tools_call(url: str, context: dict[str, Any]) -> None:
    with connect(url) as conn:
        say(conn.call_tool("add_numbers", a=5, b=3).text)


@scenario("sse-retry")
def sse_retry(url: str, context: dict[str, Any]) -> None:
    """A call whose SSE stream the server closes: the client waits `retry` and resumes it."""
    with connect(url) as conn:
        say(conn.call_tool("test_reconnection").text)


@scenario("elicitation-sep1034-client-defaults")
def elicitation_defaults(url: str, context: dict[str, Any]) -> None:
    with connect(url, elicitation="defaults") as conn:
        say(conn.call_tool("test_client_elicitation_defaults").text)


@scenario("request-metadata")
def request_metadata(url: str, context: dict[str, Any]) -> None:
    """Every request's `_meta` (version, client info, capabilities) and version header; the
    capabilities declared are roots, sampling and elicitation, so each is checked."""
    with connect(url, roots=True, sampling=lambda params: "ok", elicitation=accept) as conn:
        say(f"{conn.era} {conn.protocol_version}: tools {[t['name'] for t in conn.list_tools()]}")


@scenario("sep-2322-client-request-state")
def request_state(url: str, context: dict[str, Any]) -> None:
    """Multi-round tool calls (`input_required`): each tool called, its questions answered."""
    with connect(url, elicitation=accept) as conn:
        for tool in conn.list_tools():
            say(f"{tool['name']}: {conn.call_tool(tool['name']).text}")


@scenario("http-standard-headers", "http-invalid-tool-headers")
def every_feature(url: str, context: dict[str, Any]) -> None:
    """Every tool listed and called, every resource read, every prompt got (each request carries
    its Mcp-Method and Mcp-Name headers); tools the listing leaves out are never called."""
    with connect(url) as conn:
        for tool in conn.list_tools():
            say(f"{tool['name']}: {conn.call_tool(tool['name'], example(tool.get('inputSchema'))).text}")
        for resource in conn.list_resources():
            conn.read_resource(resource["uri"])
        for prompt in conn.list_prompts():
            conn.get_prompt(prompt["name"], {a["name"]: "x" for a in prompt.get("arguments") or [] if a.get("required")})


@scenario("http-custom-headers")
def tool_calls(url: str, context: dict[str, Any]) -> None:
    """The context's `toolCalls`, each with its arguments exactly as given (a null included,
    which the tool's schema does not allow: sent unchecked)."""
    with connect(url) as conn:
        conn.list_tools()
        for call in context.get("toolCalls") or []:
            say(f"{call['name']}: {conn.call_tool(call['name'], call.get('arguments') or {}, validate=False).text}")


@scenario("json-schema-2020-12-preservation")
def schema_echo(url: str, context: dict[str, Any]) -> None:
    """The focal tool's inputSchema sent back, verbatim, to the echo tool."""
    with connect(url) as conn:
        tools = conn.list_tools()
        [focal] = [t for t in tools if t["name"] != "json_schema_echo"]
        say(conn.call_tool("json_schema_echo", schema=focal["inputSchema"]).text)


@scenario("sep-2640-client-no-prefetch")
def skills_listed(url: str, context: dict[str, Any]) -> None:
    """The skills listed, none loaded: no skill file is read ahead of need."""
    with connect(url) as conn:
        say(f"skills: {[s.name for s in conn.list_skills()]}")


@scenario(*SKILLS_VERIFY)
def skills_loaded(url: str, context: dict[str, Any]) -> None:
    """Each skill loaded and, once verified, each of its files read; content that fails
    verification is refused and nothing more of that skill is read."""
    with connect(url) as conn:
        for skill in conn.list_skills():
            try:
                loaded = conn.load_skill(skill)
                for item in skill.resources if isinstance(skill.resources, list) else []:
                    if item["uri"] != skill.uri:
                        conn.read_skill_file(loaded, item["uri"])
            except mcp_notebook.SkillVerificationError as exc:
                say(f"refused: {exc}")


def main(argv: list[str]) -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if len(argv) < 2:
        say("usage: client.py SERVER_URL (the scenario in MCP_CONFORMANCE_SCENARIO)")
        return 2
    url = argv[-1]
    if name.startswith("auth/"):
        from auth_scenarios import run  # beside this file

        return run(name, context, url)
    handler = SCENARIOS.get(name)
    if handler is None:
        say(f"unknown scenario {name!r}; this client knows: {', '.join(sorted(SCENARIOS))}")
        return 2
    try:
        handler(url, context)
    except mcp_notebook.McpNotebookError as exc:
        say(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
