"""A connection's prompts and argument completion (`completion/complete`).

Each method is written once, as steps over the connection; the table at the end gives each
its blocking face and awaitable twin (`calls.twins`), which `Connection` takes by name.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ..calls.core import Featured
from ..calls.exchange import CallSpec, Steps
from ..calls.steps import listing, request_log_level
from ..calls.twins import twin
from ..results.objects import Listing, PromptResult
from ..tools.arguments import mapping


def list_prompts(conn: Featured, *, refresh: bool = False) -> Steps[Listing]:
    """The server's prompts (every page), cached until the server says the list changed."""
    return (yield from listing(conn._core, "prompts/list", "prompts", refresh, "prompts"))


def get_prompt(
    conn: Featured,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    timeout: float | None = None,
    log_level: str | None = None,
) -> Steps[PromptResult]:
    """A prompt's messages; required arguments are checked first (values are sent as strings)."""
    fx = conn._core
    level = request_log_level(fx, log_level)
    prompts = yield from list_prompts(conn)
    prompt = prompts.get(name)
    if prompt is None:
        raise UsageError(f"{fx.name}: unknown prompt {name!r}; the prompts are: {', '.join(prompts.names()) or 'none'}")
    arguments = {k: v if isinstance(v, str) else str(v) for k, v in mapping(arguments, f"{name}: the arguments").items()}
    missing = [a["name"] for a in prompt.get("arguments") or [] if a.get("required") and a.get("name") not in arguments]
    if missing:
        raise UsageError(f"{name}: missing required argument(s) {', '.join(missing)}")
    params: dict[str, Any] = {"name": name, "arguments": arguments} if arguments else {"name": name}
    return PromptResult(name, (yield CallSpec("prompts/get", params, timeout, log_level=level)))


def complete(
    conn: Featured,
    ref: str | dict[str, Any],
    argument: str,
    value: str = "",
    context: dict[str, str] | None = None,
    *,
    timeout: float | None = None,
) -> Steps[list[str]]:
    """`completion/complete`: `ref` is "prompt:NAME", "resource:URI_TEMPLATE" or a ref dict;
    `timeout` bounds the wait (Tab completion uses a short one)."""
    if "completions" not in conn._core.session.server.capabilities:
        return []
    if isinstance(ref, str):
        kind, _, target = ref.partition(":")
        if kind == "prompt":
            ref = {"type": "ref/prompt", "name": target}
        elif kind == "resource":
            ref = {"type": "ref/resource", "uri": target}
        else:
            raise UsageError(f"a completion ref is 'prompt:NAME' or 'resource:URI_TEMPLATE', not {ref!r}")
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
    if context:
        params["context"] = {"arguments": dict(context)}
    result = yield CallSpec("completion/complete", params, timeout)
    values = (result.get("completion") or {}).get("values") or []
    return [str(v) for v in values]


# ----- the table: each method's blocking face and awaitable twin, taken by `Connection` -----

LIST_PROMPTS = twin(list_prompts)
GET_PROMPT = twin(get_prompt)
COMPLETE = twin(complete)
