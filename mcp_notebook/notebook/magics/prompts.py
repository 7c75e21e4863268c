"""The prompt subcommands: `%mcp prompts` (the listing) and `prompt NAME arg=value ...` (its
messages, returned as a result object), on one connection named as `commands.connection` says.
"""

from __future__ import annotations

from argparse import Namespace

from ...api.results.objects import Listing, PromptResult
from .commands import REFRESH, arg, connection, connection_of, key_values, pairs, subcommand


@subcommand("prompts", "the server's prompts and their arguments (* required)", connection(positional=True), REFRESH)
def _prompts(ns: Namespace) -> Listing:
    return connection_of(ns).list_prompts(refresh=ns.refresh)


@subcommand(
    "prompt",
    "get a prompt's messages with these arguments",
    connection(),
    arg("prompt", help="the prompt's name"),
    pairs("arg=value", "the prompt's arguments"),
)
def _prompt(ns: Namespace) -> PromptResult:
    return connection_of(ns).get_prompt(ns.prompt, key_values(ns.pairs))
