"""`mcp_notebook.doctor()`: connect step by step, stop at the first step that fails, and say
what happened and what to try, as a `Diagnosis`.

A server command gets the stdio plan (the command, the process, its stdout, then the
connection); a URL the HTTP plan (URL, DNS, TCP, TLS, the initialize POST, a 401's metadata,
the session id, the listening stream, the HTTP+SSE fallback, then the connection: its era
probe, what the server answered and what was concluded, and the handshake); a
configured server's name becomes its command or URL first, as `connect(config=NAME)` does.
The rules kept here: every step has a time limit and nothing it starts outlives the
diagnosis (`Context.close` in a `finally`); the steps after the first failure are listed as
skipped; each step shows as it completes through the front end's checklist (widgets in
Jupyter, a line per step elsewhere).
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable, Sequence
from typing import Any

from ..api.connecting import configured
from ..api.connecting.options import ConnectOptions, check_timeout, option_names
from ..api.connecting.targets import is_url
from ..api.display import frontend
from ..base.errors import UsageError
from ..transports.urls import redact_url
from . import probe as doctor_probe
from . import session as doctor_session
from . import stdio as doctor_stdio
from .context import DEFAULT_STEP_TIMEOUT, Context, secrets_of
from .report import NOT_RUN, Checklist, Diagnosis, Step, TextChecklist, make_step

StepFn = Callable[[Context], Step]

CONNECTION: list[tuple[str, StepFn]] = [
    ("era probe", doctor_probe.era_probe),
    ("handshake", doctor_session.handshake),
    ("version and era", doctor_session.version),
    ("ping", doctor_session.ping),
    ("listings", doctor_session.listings),
]
STDIO: list[tuple[str, StepFn]] = [
    ("command", doctor_stdio.command),
    ("process", doctor_stdio.process),
    ("stdout", doctor_stdio.stdout),
    *CONNECTION,
]


def http_plan() -> list[tuple[str, StepFn]]:
    """The steps for a URL (their modules bring httpx2, imported with the first URL)."""
    from . import auth as doctor_auth
    from . import http as doctor_http
    from . import net as doctor_net

    return [
        ("URL", doctor_net.url),
        ("DNS", doctor_net.dns),
        ("TCP connect", doctor_net.tcp),
        ("TLS", doctor_net.tls),
        ("initialize POST", doctor_http.initialize),
        ("authorization", doctor_auth.authorization),
        ("session id", doctor_http.session_id),
        ("listening stream", doctor_http.listening_stream),
        ("HTTP+SSE fallback", doctor_http.sse_fallback),
        *CONNECTION,
    ]


def doctor(
    target: str | Sequence[str] | None = None,
    *,
    timeout: float = DEFAULT_STEP_TIMEOUT,
    live: bool = True,
    **connect_options: Any,
) -> Diagnosis:
    """Connect to `target` step by step and say where it goes wrong, and what to try.

    `target` is a server command (a string or an argv list), an http(s) URL, or the name of a
    server another client configured (as `%mcp connect NAME`; `config="NAME"` says so
    explicitly). `connect_options` are `connect()`'s (headers, env, era, auth, ...); the
    steps after the handshake run on a real connection opened with them, closed at the end.
    `timeout` bounds each step (and each request of the connection), in seconds. With
    `live`, each step shows as it completes (a checklist in Jupyter, a line each elsewhere).

    Returns a `Diagnosis`: `.ok`, and `.steps`, each with `name`, `status` (ok, warn, fail or
    skipped), `detail` and `hint`. Secrets given in the options never appear in it.
    """
    check_timeout(timeout, optional=False)
    unknown = sorted(set(connect_options) - set(option_names()))
    if unknown:
        raise UsageError(f"doctor takes connect()'s options; not these: {', '.join(unknown)}")
    target, options = _resolved(target, ConnectOptions(**connect_options))
    http = is_url(target)
    ctx = Context(target, options, float(timeout))
    for secret in secrets_of(target, options, dict(options.headers or {})):
        ctx.redactor.add(secret)
    shown = redact_url(str(target).strip()) if http else shlex.join(doctor_stdio.argv_of(target))
    diagnosis = Diagnosis(ctx.redactor.text(shown), "http" if http else "stdio")
    view = (frontend.current().checklist() or TextChecklist()) if live else Checklist()
    try:
        run(ctx, http_plan() if http else STDIO, diagnosis, view)
    finally:
        ctx.close()
        view.done(diagnosis)
    return diagnosis


def _resolved(target: str | Sequence[str] | None, options: ConnectOptions) -> tuple[str | Sequence[str], ConnectOptions]:
    """A configured server's name, given as the target or as config=, turned into its command or URL."""
    if options.config is None and isinstance(target, str) and _configured_name(target):
        options, target = options.replace(config=target.strip()), None
    if options.config is None and target is None:
        raise UsageError("doctor needs a target: a server command, an http(s) URL, or a configured server's name")
    resolved, prepared, _ = configured.prepare(target, options)
    return resolved, prepared


def _configured_name(target: str) -> bool:
    """A single word that is no URL and no program on PATH, but a configured server's name."""
    word = target.strip()
    if not word or is_url(word) or any(ch.isspace() for ch in word) or "/" in word or shutil.which(word):
        return False
    try:
        return any(entry.name == word for entry in configured.servers().entries)
    except (OSError, UsageError):
        return False


def run(ctx: Context, plan: list[tuple[str, StepFn]], diagnosis: Diagnosis, view: Checklist) -> None:
    """Each step in order, shown as it completes; after a failure the rest are skipped."""
    for index, (name, check) in enumerate(plan):
        ctx.name = name
        view.running(diagnosis, name)
        try:
            step = check(ctx)
        except Exception as exc:  # noqa: BLE001 - a step that breaks is a finding, not a crash of the doctor
            step = make_step(
                ctx.redactor, name, "fail", f"the check itself failed: {type(exc).__name__}: {exc}", "please report this"
            )
        diagnosis.steps.append(step)
        view.step(diagnosis, step)
        if step.status == "fail":
            for later, _ in plan[index + 1 :]:
                skipped = make_step(ctx.redactor, later, "skipped", f"{NOT_RUN}{name} failed")
                diagnosis.steps.append(skipped)
                view.step(diagnosis, skipped)
            return
