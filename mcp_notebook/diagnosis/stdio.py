"""The doctor's first steps for a server command: the command resolves and can run, the
process starts and stays up, and what it writes on stdout is JSON-RPC.

These run the command once directly (not through the transport): an `initialize` request
(or `server/discover` when the modern era is asked for) goes to its stdin, and its stdout
is read line by line until the answer, the end of the process, or the step's time limit.
The rule kept here: the process is always reaped, its whole process group, however the
watch ended; it never outlives the step.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api.connecting.targets import SCRIPT_SUFFIXES
from ..base.plural import counted
from ..base.text import clip, one_line
from ..protocol import modern
from ..protocol.versions import LATEST_LEGACY, MODERN_VERSIONS
from ..session.era import LEGACY, MODERN
from .context import Context
from .report import Step

PROBE_ID = "doctor-1"
CLIENT_INFO = {"name": "mcp-notebook-doctor", "version": "0"}
KEPT_LINES = 5
STDERR_LINES = 20
REAP_WAIT = 2.0
RUNTIMES = {"npx": "Node.js (npx comes with it)", "node": "Node.js", "uvx": "uv", "uv": "uv", "docker": "Docker", "deno": "Deno"}
_EOF = object()


def argv_of(target: Any) -> list[str]:
    return shlex.split(target) if isinstance(target, str) else [str(part) for part in target]


def _located(ctx: Context, path: str) -> Path:
    cwd = ctx.options.cwd
    return Path(cwd, path) if cwd is not None and not os.path.isabs(path) else Path(path)


def command(ctx: Context) -> Step:
    """The program is found (on PATH, or at the path given) and may be run; a script it is
    given exists."""
    argv = argv_of(ctx.target)
    if not argv:
        return ctx.fail("the server command is empty", "give the command that starts the server, e.g. python server.py")
    ctx.facts["argv"] = argv
    program = argv[0]
    found = shutil.which(program, path=ctx.env().get("PATH")) if os.sep not in program else None
    if found is None and os.sep in program:
        path = _located(ctx, program)
        if not path.exists():
            return ctx.fail(
                f"{program} does not exist", "check the path (relative paths start from the kernel's directory, or cwd=)"
            )
        if path.is_dir():
            return ctx.fail(
                f"{program} is a directory, not a program", f"give the server's command, e.g. python {program}/server.py"
            )
        if not os.access(path, os.X_OK):
            return ctx.fail(
                f"{program} is not executable", f"chmod +x {program}, or run it with its interpreter (python {program})"
            )
        found = str(path)
    if found is None:
        if _located(ctx, program).is_file():
            return ctx.fail(f"{program} is not on PATH; a command without a slash is looked up there", f"write ./{program}")
        needs = RUNTIMES.get(program)
        hint = f"install {needs}, or " if needs else "install it, or "
        hint += "give its full path (a kernel started from a desktop launcher may have a shorter PATH than your shell)"
        return ctx.fail(f"{program} is not found on PATH", hint)
    for before, arg in zip(argv, argv[1:], strict=False):
        if arg.startswith("-") or before.startswith("-") or "://" in arg or Path(arg).suffix not in SCRIPT_SUFFIXES:
            continue
        if not _located(ctx, arg).exists():
            return ctx.fail(f"{program} is found ({found}), but the script {arg} does not exist", "check the script's path")
        break
    return ctx.ok(f"{program} is executable" if found == program else f"{program} is {found}")


@dataclass
class Watched:
    """What one run of the command showed in the step's time."""

    spawn_error: OSError | None = None
    pid: int | None = None
    answer: dict[str, Any] | None = None
    not_rpc: list[str] = field(default_factory=list)  # the first stdout lines that are not JSON-RPC
    not_rpc_count: int = 0
    frames: int = 0  # other JSON-RPC messages (notifications, server requests)
    exit_code: int | None = None  # None: still running when the watch ended
    exited_after_answer: bool = False
    stderr: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _probe(ctx: Context) -> str:
    if ctx.asked is MODERN:
        version = ctx.options.protocol_version or MODERN_VERSIONS[0]
        params = modern.with_meta(None, version, CLIENT_INFO, {})
        return json.dumps({"jsonrpc": "2.0", "id": PROBE_ID, "method": "server/discover", "params": params})
    params = {
        "protocolVersion": ctx.options.protocol_version or LATEST_LEGACY,
        "capabilities": {},
        "clientInfo": CLIENT_INFO,
    }
    return json.dumps({"jsonrpc": "2.0", "id": PROBE_ID, "method": "initialize", "params": params})


def _pump(stream: Any, add: Callable[[Any], None]) -> None:
    """Each line of `stream` to `add`, then `_EOF`."""
    try:
        for raw in iter(stream.readline, b""):
            add(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    except (OSError, ValueError):
        pass
    finally:
        add(_EOF)


def watch(ctx: Context) -> Watched:
    """Run the command, send one request, and read until its answer; cached for the next steps."""
    cached = ctx.facts.get("watched")
    if isinstance(cached, Watched):
        return cached
    seen = Watched()
    ctx.facts["watched"] = seen
    cwd = str(ctx.options.cwd) if ctx.options.cwd is not None else None
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            ctx.facts["argv"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ctx.env(),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        seen.spawn_error = exc
        return seen
    seen.pid = process.pid
    lines: queue.Queue[Any] = queue.Queue()
    stderr: deque[Any] = deque(maxlen=STDERR_LINES)
    readers = [
        threading.Thread(target=_pump, args=(process.stdout, lines.put), daemon=True, name="doctor-stdout"),
        threading.Thread(target=_pump, args=(process.stderr, stderr.append), daemon=True, name="doctor-stderr"),
    ]
    for reader in readers:
        reader.start()
    try:
        assert process.stdin is not None
        process.stdin.write((_probe(ctx) + "\n").encode())
        process.stdin.flush()
    except OSError:
        pass  # it exited already: the reading below sees the end
    try:
        _read(seen, lines, started + ctx.timeout)
        seen.seconds = time.monotonic() - started
        if seen.answer is not None:
            seen.exited_after_answer = process.poll() is not None
        else:
            try:
                seen.exit_code = process.wait(timeout=REAP_WAIT if seen.exit_code is not None else 0.01)
            except subprocess.TimeoutExpired:
                seen.exit_code = None
    finally:
        code = _reap(process)
        if seen.exited_after_answer:
            seen.exit_code = code
        for reader in readers:
            reader.join(REAP_WAIT)
        seen.stderr = [line for line in stderr if line is not _EOF]
    return seen


def _read(seen: Watched, lines: queue.Queue[Any], deadline: float) -> None:
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return
        if line is _EOF:
            seen.exit_code = -1  # the end of stdout; the real status is read when it is reaped
            return
        if not line.strip():
            continue
        message = _json_rpc(line)
        if message is None:
            seen.not_rpc_count += 1
            if len(seen.not_rpc) < KEPT_LINES:
                seen.not_rpc.append(clip(line, 200))
        elif message.get("id") == PROBE_ID and ("result" in message or "error" in message):
            seen.answer = message
            return
        else:
            seen.frames += 1


def _json_rpc(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None


def _reap(process: subprocess.Popen[bytes]) -> int:
    """Stop the process and its group: stdin closed, then SIGTERM, then SIGKILL; its status."""
    try:
        if process.stdin is not None:
            process.stdin.close()  # a server that reads stdin ends here
    except OSError:
        pass
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            return process.wait(timeout=REAP_WAIT if sig != signal.SIGKILL else None)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def process(ctx: Context) -> Step:
    """The command starts, and is still running when it has answered (or when the step ends)."""
    seen = watch(ctx)
    argv = ctx.facts["argv"]
    error = seen.spawn_error
    if error is not None:
        if getattr(error, "errno", None) == 8:  # ENOEXEC
            return ctx.fail(
                f"{argv[0]} cannot be run: {error.strerror}", "a script needs a #! line, or run it with its interpreter"
            )
        return ctx.fail(f"{argv[0]} did not start: {error.strerror}", "check the command")
    tail = _stderr_tail(seen)
    if seen.not_rpc:
        tail = f"; on stdout it printed {one_line(seen.not_rpc[0])!r}{tail}"
    if seen.answer is None and seen.exit_code is not None:
        status = _status(seen.exit_code)
        if seen.exit_code == 0:
            detail = f"the process exited ({status}) before answering: a stdio server must keep running and read stdin{tail}"
            hint = "is this a one-shot script, or does the server need an option (such as --stdio) to serve?"
        else:
            detail = f"the process exited at once ({status}){tail}"
            hint = "run the command in a terminal to see why it stops; its stderr is above"
        return ctx.fail(detail, hint)
    if seen.exited_after_answer:
        return ctx.fail(
            f"the process exited right after its first answer ({_status(seen.exit_code)}){tail}",
            "a server keeps running until its stdin closes",
        )
    if seen.answer is None:
        return ctx.ok(f"pid {seen.pid} started and still running after {ctx.timeout:g} s")
    return ctx.ok(f"pid {seen.pid} started and stayed up; answered in {seen.seconds * 1000:.0f} ms")


def stdout(ctx: Context) -> Step:
    """What the process writes on stdout is JSON-RPC, and an answer comes."""
    seen = watch(ctx)
    request = (ctx.asked or LEGACY).opening
    if seen.not_rpc:
        first = one_line(seen.not_rpc[0])
        more = f" (and {seen.not_rpc_count - 1} more)" if seen.not_rpc_count > 1 else ""
        after = "before its answer" if seen.answer is not None else f"and no answer to {request} came"
        lines = "1 line that is" if seen.not_rpc_count == 1 else f"{seen.not_rpc_count} lines that are"
        detail = f"stdout has {lines} not JSON-RPC {after}: {first!r}{more}"
        if seen.answer is not None:
            detail += "; mcp-notebook skips such lines, but stricter clients fail on the first"
        return ctx.fail(
            detail,
            "a stdio server must write only MCP messages to stdout: send banners and logs to stderr "
            "(print(..., file=sys.stderr), console.error, logging's default stream)",
        )
    if seen.answer is None:
        return ctx.fail(
            f"nothing came on stdout within {ctx.timeout:g} s of sending {request}{_stderr_tail(seen)}",
            "does the server read requests from stdin? a slow start: give doctor(timeout=...) more seconds",
        )
    extra = f", after {counted(seen.frames, 'other message')}" if seen.frames else ""
    error = seen.answer.get("error")
    kind = f"an error: {one_line(str(error.get('message', '')))[:120]}" if isinstance(error, dict) else "a result"
    return ctx.ok(f"the answer to {request} is JSON-RPC ({kind}){extra}")


def _status(code: int | None) -> str:
    if code is None:
        return "still running"
    return f"killed by signal {-code}" if code < 0 else f"status {code}"


def _stderr_tail(seen: Watched) -> str:
    lines = [one_line(line) for line in seen.stderr if line.strip()][-3:]
    return f"; its stderr ends: {' | '.join(lines)}" if lines else ""
