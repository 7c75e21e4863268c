"""`%mcp doctor TARGET`: the connection doctor (`mcp_notebook.doctor`) as a subcommand.

TARGET is an http(s) URL or a configured server's name; a server command goes after `--`.
The checklist is the output (a live widget in Jupyter, a line per step elsewhere), so the
line returns nothing; `mcp_notebook.doctor(...)` returns the `Diagnosis`.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ...diagnosis.context import DEFAULT_STEP_TIMEOUT
from ...session.era import ERA_CHOICES
from .commands import CommandError, after_dashes, arg, flag, seconds, subcommand
from .session import _env_pair, _header


@subcommand(
    "doctor",
    "connect step by step and say where it fails and what to try: a URL, a configured server's NAME, or a command after --",
    arg("target", nargs="?", help="an http(s) URL, or the name of a configured server (%%mcp servers)"),
    arg("--era", default="auto", choices=ERA_CHOICES, help="the protocol era; auto probes (default)"),
    arg("--timeout", type=seconds, metavar="S", default=DEFAULT_STEP_TIMEOUT, help="seconds each step may take (default 10)"),
    arg("--env", type=_env_pair, action="append", default=[], metavar="K=V", help="server commands: an environment variable"),
    arg("--header", type=_header, action="append", default=[], metavar="'K: V'", help="URLs: an HTTP header"),
    arg("--bearer-token-env", metavar="VAR", help="URLs: send the token in $VAR as Authorization: Bearer"),
    arg("--transport", choices=["auto", "http", "sse"], default="auto", help="URLs: the HTTP transport"),
    arg("--auth", choices=["auto", "none"], default="auto", help="OAuth: authorize when the server asks (auto), or never"),
    arg(
        "--from", dest="from_file", metavar="FILE", help="a configured server: the file (or client, e.g. cursor) to take it from"
    ),
    flag(
        "--consent",
        help="a configured command, or a URL sent values from this machine: go ahead without asking (read it in %%mcp servers)",
    ),
    after_dashes("command", "COMMAND", "the server command to diagnose over stdio"),
    bare="doctor needs a URL, a configured server's name, or a command after -- (%mcp doctor -- python server.py)",
)
def _doctor(ns: Namespace) -> None:
    if ns.target is not None and ns.command:
        raise CommandError("give a URL (or a configured name) or a command after --, not both")
    target: Any = ns.target if ns.target is not None else ns.command
    if not target:
        raise CommandError("no server command after --, e.g. %mcp doctor -- python server.py")
    options: dict[str, Any] = {"era": ns.era, "auth": None if ns.auth == "none" else "auto"}
    if ns.env:
        options["env"] = dict(ns.env)
    if ns.header:
        options["headers"] = dict(ns.header)
    if ns.bearer_token_env:
        options["bearer_token_env"] = ns.bearer_token_env
    if ns.transport != "auto":
        options["transport"] = ns.transport
    if ns.from_file is not None or ns.consent:
        if not isinstance(target, str) or target.startswith(("http://", "https://")):
            raise CommandError("--from and --consent are for configured servers: %mcp doctor NAME --from FILE")
        options.update(config=target, config_file=ns.from_file, consent=True if ns.consent else None)
        target = None
    from ...diagnosis.run import doctor  # the doctor comes with its first use, not with the magics

    doctor(target, timeout=ns.timeout, **options)
