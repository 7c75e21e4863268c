"""`mcp_notebook.compare(path, target)`: ask a live server what a cassette's client asked, and
report every answer that came back different.

The live connection opens as the recorded one did: the same protocol version (so the same
era), the recorded client's capabilities, and the recorded client's answers to server
requests (a sampling result, an elicitation, roots) given again, by method, in order. The
handshake's result is compared first (version, capabilities, server info, instructions),
then each recorded request is sent again (its `_meta` left out: ours differ per run) and its
result or error compared with the recorded one, skipping volatile fields. The live answers
pass through the connection's redaction (its `secrets`), as the recorded ones did.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ...base.errors import HandshakeError, McpError, McpNotebookError, UsageError
from ...base.text import one_line
from ...cassette import CassetteError, Exchange, Tape, load
from ...cassette.tape import HANDSHAKE
from ...session.era import ERAS
from ...session.redaction import Redactor
from ..connecting.connect import connect
from ..connecting.options import DEFAULT_TIMEOUT
from ..connection import Connection
from .comparison import VOLATILE, Check, Comparison, Difference, Ignore, differences

NOT_ASKED_AGAIN = frozenset({*HANDSHAKE, "ping"})  # the connection asks these itself
LABEL_PARAMS = ("name", "uri")


def compare(
    path: str | Path,
    target: str | Sequence[str],
    *,
    ignore: Collection[str] = VOLATILE,
    also_ignore: Collection[str] = (),
    name: str = "compare",
    timeout: float | None = DEFAULT_TIMEOUT,
    **connect_options: Any,
) -> Comparison:
    """Replay the cassette at `path` against the live server `target` (a command or a URL, as
    `connect()` takes) and return the `Comparison`: `.ok`, and `.differences` in results,
    errors, listings and capabilities. `ignore` is the volatile fields skipped (key names, or
    JSON pointers with `*` for one segment; `VOLATILE` by default), `also_ignore` adds to it;
    `connect_options` are `connect()`'s. The connection is closed at the end."""
    try:
        tape = load(path)
    except CassetteError as exc:
        raise UsageError(str(exc)) from None
    patterns = (*ignore, *also_ignore)
    shown_target = Redactor(connect_options.get("secrets", ())).text(target if isinstance(target, str) else " ".join(target))
    comparison = Comparison(str(path), shown_target, ignored=patterns)
    rules = Ignore(patterns)
    handshake = tape.handshake()
    options = {**_like_the_recording(tape), **connect_options}  # the caller's options win
    options["handlers"] = {**_recorded_answers(tape), **(connect_options.get("handlers") or {})}
    try:
        conn = connect(target, name=name, timeout=timeout, **options)
    except HandshakeError as refused:  # the server answered, and not as recorded: that is the difference
        if handshake is None:
            raise
        failed = {"error": {"failed": one_line(str(refused))}}
        comparison.checks.append(Check(handshake.method, _label(handshake), _found(handshake, failed, rules)))
        return comparison
    comparison.target = conn.trace.redact(comparison.target)  # and what the connection learnt is secret (headers)
    try:
        if handshake is not None:
            comparison.checks.append(_check_handshake(conn, handshake, rules))
        for exchange in tape.requests():
            if exchange.method not in NOT_ASKED_AGAIN and exchange.reply is not None:
                comparison.checks.append(_check(conn, exchange, rules))
    finally:
        conn.close()
    return comparison


def _like_the_recording(tape: Tape) -> dict[str, Any]:
    """connect() options that open the session as the recorded client did (its version and capabilities)."""
    options: dict[str, Any] = {}
    version = tape.header.get("protocolVersion")
    if isinstance(version, str):
        options["protocol_version"] = version
    elif tape.era in ERAS:
        options["era"] = tape.era
    declared = _declared_capabilities(tape)
    if declared is not None:
        options["capabilities"] = declared
    return options


def _declared_capabilities(tape: Tape) -> dict[str, Any] | None:
    for exchange in tape.requests():
        if exchange.method == "initialize":
            capabilities = exchange.params.get("capabilities")
            return capabilities if isinstance(capabilities, dict) else None
        declared = exchange.meta.get("io.modelcontextprotocol/clientCapabilities")
        if isinstance(declared, dict):
            return declared
    return None


def _recorded_answers(tape: Tape) -> dict[str, Any]:
    """A handler per server request method the recorded client answered: its answers again, in order
    (the last one once they run out)."""

    def answering(answers: list[dict[str, Any]]) -> Any:
        given = iter(answers)

        def handler(params: dict[str, Any]) -> Any:
            answer = next(given, answers[-1])
            error = answer.get("error")
            if isinstance(error, dict):
                raise McpError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
            return answer.get("result", {})

        return handler

    return {method: answering(answers) for method, answers in tape.answers().items() if method != "ping"}


def _label(exchange: Exchange) -> str:
    params = exchange.bare_params()
    named = next((params[key] for key in LABEL_PARAMS if isinstance(params.get(key), str)), None)
    return one_line(f"{exchange.method} {named}" if named else exchange.method)


def _found(exchange: Exchange, live: dict[str, Any], rules: Ignore) -> list[Difference]:
    """What differs between the recorded reply (its result or error) and the live one."""
    assert exchange.reply is not None
    recorded = {key: exchange.reply[key] for key in ("result", "error") if key in exchange.reply}
    method, label = exchange.method, _label(exchange)
    if recorded.keys() != live.keys():  # a result where an error was, or the other way: one difference
        return [Difference(method, "", recorded, live, label)]
    return [Difference(method, where, was, now, label) for where, was, now in differences(recorded, live, rules)]


def _check_handshake(conn: Connection, exchange: Exchange, rules: Ignore) -> Check:
    answered = conn.trace.filter(method=exchange.method, direction="in", kind=("response", "error"))
    if answered:
        live = {key: answered[-1].message[key] for key in ("result", "error") if key in answered[-1].message}
    else:
        live = {"error": {"failed": f"the live connection opened without {exchange.method}"}}
    return Check(exchange.method, _label(exchange), _found(exchange, live, rules))


def _check(conn: Connection, exchange: Exchange, rules: Ignore) -> Check:
    live: dict[str, Any]
    try:
        params = exchange.bare_params() if "params" in exchange.message else None
        live = {"result": conn.trace.redactor.value(conn.request(exchange.method, params))}
    except McpError as exc:
        live = {"error": {"code": exc.code, "message": exc.message, **({"data": exc.data} if exc.data is not None else {})}}
    except McpNotebookError as exc:
        live = {"error": {"failed": one_line(str(exc))}}
    return Check(exchange.method, _label(exchange), _found(exchange, live, rules))
