"""Filling in the `${...}` of a configured entry: what it runs or reaches, ready to connect.

- `${env:VAR}` (VS Code, Cursor, Windsurf) and `${VAR}` / `${VAR:-default}` (Claude Code),
  and Gemini CLI's `$VAR`: the kernel's environment; an unset variable with no default is
  a one-line error naming it.
- `${workspaceFolder}` (the project: the working directory unless given) and `${userHome}`.
- `${input:id}`: a VS Code input of the entry's file (`promptString`, `pickString`), asked of
  the user through `ask`, all at once; its answers are used for this connection only and
  never written anywhere. Answers to `password: true` inputs, and values of variables whose
  name looks like a credential, are returned as `secrets` for the trace to redact.

What an entry takes from this machine (environment variables, `${userHome}`,
`${workspaceFolder}`) is named in `reads`, never with its value: a configured URL that would
send any of it is connected to only with consent, as a configured command is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import UsageError
from ..transports.urls import is_secret_name
from .entries import STDIO, ServerEntry

PATTERN = re.compile(r"\$\{([^}]*)\}")
BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")  # Gemini CLI's $VAR


@dataclass(frozen=True)
class InputRequest:
    """One VS Code input to ask for: `password` ones are typed into a password field."""

    id: str
    description: str
    password: bool = False
    default: str | None = None
    options: tuple[str, ...] = ()


Ask = Callable[[list[InputRequest], ServerEntry], Mapping[str, str] | None]


@dataclass(frozen=True)
class Resolved:
    """An entry with every `${...}` filled in: a command line (argv) or a URL, and the rest."""

    entry: ServerEntry
    argv: list[str] | None
    url: str | None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()  # the environment variables (and ${userHome}, ${workspaceFolder}) filled in

    @property
    def target(self) -> list[str] | str:
        return self.argv if self.argv is not None else str(self.url)

    @property
    def transport(self) -> str:
        """The HTTP transport to ask `connect` for ("auto" for commands)."""
        return "auto" if self.entry.transport == STDIO else self.entry.transport


def input_ids(entry: ServerEntry) -> list[str]:
    """The ids of the `${input:...}` the entry uses, in order, each once."""
    ids: list[str] = []
    for text in _texts(entry):
        for match in PATTERN.finditer(text):
            kind, _, rest = match.group(1).partition(":")
            if kind == "input" and rest not in ids:
                ids.append(rest)
    return ids


def input_requests(entry: ServerEntry) -> list[InputRequest]:
    """What to ask for this entry: the definitions of the inputs it uses (one line if one is missing)."""
    defined = {str(i.get("id")): i for i in entry.inputs}
    requests = []
    for input_id in input_ids(entry):
        spec = defined.get(input_id)
        if spec is None:
            raise UsageError(
                f"{entry.name}: ${{input:{input_id}}} is used but no input with that id is defined in {entry.source}"
            )
        options = spec.get("options") if spec.get("type") == "pickString" else None
        requests.append(
            InputRequest(
                id=input_id,
                description=str(spec.get("description") or input_id),
                password=spec.get("password") is True,
                default=str(spec["default"]) if spec.get("default") is not None else None,
                options=tuple(str(o.get("value", o)) if isinstance(o, dict) else str(o) for o in options or ()),
            )
        )
    return requests


def resolve(
    entry: ServerEntry,
    *,
    workspace: Path,
    ask: Ask | None = None,
    environ: Mapping[str, str] | None = None,
) -> Resolved:
    """The entry with its variables filled in; inputs are asked through `ask` (None: refused)."""
    environ = os.environ if environ is None else environ
    requests = input_requests(entry)
    answers: Mapping[str, str] = {}
    if requests:
        got = ask(requests, entry) if ask is not None else None
        if got is None:
            raise UsageError(f"{entry.name}: not connected: its inputs ({', '.join(r.id for r in requests)}) were not given")
        answers = got
    secrets = [answers[r.id] for r in requests if r.password and answers.get(r.id)]
    reads: list[str] = []

    def fill(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            return _variable(entry, match.group(1), workspace, answers, environ, secrets, reads)

        out = PATTERN.sub(one, text)
        if entry.client == "gemini":
            out = BARE.sub(lambda m: _variable(entry, m.group(1), workspace, answers, environ, secrets, reads), out)
        return out

    env = {key: fill(value) for key, value in entry.env}
    headers = {key: fill(value) for key, value in entry.headers}
    secrets += [v for k, v in [*env.items(), *headers.items()] if v and (is_secret_name(k) or k.lower() == "authorization")]
    cwd = fill(entry.cwd) if entry.cwd is not None else None
    if cwd is not None and not Path(cwd).expanduser().is_absolute():
        cwd = str(workspace / Path(cwd).expanduser())
    argv = [fill(entry.command or ""), *(fill(a) for a in entry.args)] if entry.is_command else None
    url = fill(entry.url) if entry.url is not None else None
    secret_values = tuple(dict.fromkeys(s for s in secrets if s))
    return Resolved(entry, argv, url, env, cwd, headers, secret_values, tuple(dict.fromkeys(reads)))


def _variable(
    entry: ServerEntry,
    name: str,
    workspace: Path,
    answers: Mapping[str, str],
    environ: Mapping[str, str],
    secrets: list[str],
    reads: list[str],
) -> str:
    kind, colon, rest = name.partition(":")
    if colon and kind == "input":
        return str(answers.get(rest, ""))
    if colon and kind == "env":
        var, default = rest, None
    elif name in ("workspaceFolder", "userHome"):
        reads.append(f"${{{name}}}")
        return str(workspace) if name == "workspaceFolder" else str(Path.home())
    else:
        var, _, default = name.partition(":-")
        default = default if ":-" in name else None
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
        raise UsageError(f"{entry.name}: ${{{name}}} in {entry.source} is not a variable this client knows")
    reads.append(var)
    value = environ.get(var, default)
    if value is None:
        raise UsageError(f"{entry.name}: environment variable {var} is not set (used as ${{{name}}} in {entry.source})")
    if is_secret_name(var) and value:
        secrets.append(value)
    return value


def _texts(entry: ServerEntry) -> list[str]:
    values: list[Any] = [entry.command, *entry.args, entry.cwd, entry.url]
    values += [v for _, v in entry.env] + [v for _, v in entry.headers]
    return [v for v in values if isinstance(v, str)]
