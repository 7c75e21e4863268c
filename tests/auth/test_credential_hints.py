"""A server that wants credentials OAuth cannot give is answered with a hint, and every option the
hint names exists where a user may read it: the API's `connect()`, `%mcp connect` and
`python -m mcp_notebook` (whose `--bearer-token-env` the hint long named before it existed)."""

from __future__ import annotations

import inspect
import re

import httpx2

import mcp_notebook
from mcp_notebook.__main__ import _parser
from mcp_notebook.notebook.magics import session as magic_session  # noqa: F401 - registers %mcp connect
from mcp_notebook.notebook.magics.commands import SUBCOMMANDS
from mcp_notebook.transports.http_errors import describe_status


def hint() -> str:
    response = httpx2.Response(
        401, headers={"WWW-Authenticate": 'Bearer realm="x"'}, request=httpx2.Request("POST", "http://h/mcp")
    )
    return describe_status(response, "", "http://h/mcp")


def test_the_hint_names_the_apis_options_and_they_exist() -> None:
    text = hint()
    named = set(re.findall(r"\b([a-z_]+)=", text))
    assert named == {"headers", "bearer_token_env", "auth"}, text
    assert named <= set(inspect.signature(mcp_notebook.connect).parameters)


def test_the_flags_the_hint_names_exist_in_the_magics_and_the_command_line() -> None:
    flags = set(re.findall(r"(--[a-z-]+)", hint()))
    assert flags == {"--header", "--bearer-token-env"}
    magic = {option for action in SUBCOMMANDS["connect"].parser._actions for option in action.option_strings}
    cli = {option for action in _parser()._actions for option in action.option_strings}
    assert flags <= magic and flags <= cli
