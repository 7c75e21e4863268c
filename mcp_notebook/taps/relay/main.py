"""The stdio relay (`python -m mcp_notebook.tap [--name NAME] -- COMMAND ARGS...`): what a client
runs instead of a server's command, so a notebook can watch the session.

It starts the server as a child leading a process group of its own (as our stdio transport
does: a signal to the client's group does not kill it out of order), and relays bytes both ways
unchanged: one thread per direction reads, hands the bytes to the recorder
(`recorder.Recorder`: a queue append, which never blocks; the records are made off the relayed
path) and writes them on at once. Handing over first keeps the records in causal order across
the two directions: a peer's answer can only be read after the bytes it answers were written
on, so it is always handed over after them (written first, a fast client's pong could be
recorded before the server's ping it answers). The server's stderr is passed through to ours as it is, and recorded by line.
When the client hangs up (our stdin closes, or our stdout breaks) or the relay is told to stop
(SIGTERM, SIGINT, SIGHUP), the server is ended the way a client ends it: its stdin closed, a
grace, SIGTERM, SIGKILL. The relay exits with the server's exit code (a signal N: 128+N), once
the records are flushed. The rule: the relayed bytes are never changed, held back or answered
for, whatever the notebook or the disk does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

from ...transports.reaper import EXIT_GRACE, KILL_WAIT, TERM_GRACE, Reaper
from ..wire import recording as recordings
from ..wire import rendezvous
from ..wire.records import CLIENT, CLOSED, EXIT, SERVER, STDERR
from .feed import NotebookFeed
from .recorder import Recorder, Scrubber, argv_secrets, env_secrets

READ_SIZE = 65536
DRAIN_WAIT = 2.0  # after the server exits, how long its pipes may stay open (a grandchild holding them)
SWITCH_INTERVAL = 0.00005
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))

EXAMPLE = """\
A client runs the relay instead of the server's command; e.g. in Claude Desktop's or Cursor's
configuration (the same entry, "python" being the interpreter mcp-notebook is installed in):

  "everything": {
    "command": "python",
    "args": ["-m", "mcp_notebook.tap", "--name", "everything", "--",
             "npx", "-y", "@modelcontextprotocol/server-everything"]
  }

In the notebook, mcp_notebook.tap("everything") then shows that session live. Bytes pass
through unchanged; values of credential-looking environment variables are redacted in what the
notebook sees. The relay exits with the server's exit code (127: command not found)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relay; its exit code."""
    try:
        name, args, command = _parse(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse's --help and usage errors
        return exc.code if isinstance(exc.code, int) else 2
    executable = shutil.which(command[0])
    if executable is None:
        return _fail(127, f"command not found: {command[0]}")
    return Relay(name, command, executable, args.secret_env, int(args.recording_mb * 2**20)).run()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """A user's mistake: one line, not the usage block."""
        self.exit(2, f"mcp-notebook tap: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m mcp_notebook.tap",
        usage="%(prog)s [--name NAME] [--secret-env VAR] -- COMMAND [ARGS...]",
        description="Relay an MCP stdio server's session unchanged and stream it to the notebook watching NAME.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--name", help="the tap name a notebook watches (default: the command's basename)")
    parser.add_argument(
        "--secret-env",
        action="append",
        default=[],
        metavar="VAR",
        help="also redact the value of environment variable VAR (credential-looking names are redacted anyway)",
    )
    parser.add_argument(
        "--recording-mb",
        type=float,
        default=recordings.TOTAL_BYTES / 2**20,
        metavar="MB",
        help="bound of this session's on-disk recording (default %(default)g): its start and its newest are kept",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the server's command and its arguments")
    return parser


def _parse(argv: list[str]) -> tuple[str, argparse.Namespace, list[str]]:
    parser = _parser()
    if "--" in argv:
        cut = argv.index("--")
        args = parser.parse_args(argv[:cut])
        command = argv[cut + 1 :]
        if args.command:
            parser.error(f"unexpected arguments before '--': {' '.join(args.command)}")
    else:
        args = parser.parse_args(argv)
        command = list(args.command)
    if not command:
        parser.error("no server command: give it after '--', e.g. python -m mcp_notebook.tap -- npx -y SERVER")
    name = args.name if args.name is not None else rendezvous.name_for(command[0])
    try:
        rendezvous.check_name(name)
    except ValueError as exc:
        parser.error(str(exc))
    if not args.recording_mb > 0:
        parser.error("--recording-mb must be more than 0")
    return name, args, command


def _fail(code: int, message: str) -> int:
    sys.stderr.write(f"mcp-notebook tap: {message}\n")
    sys.stderr.flush()
    return code


class Relay:
    """One relayed session: the child, three pumps, the recorder, and the ending."""

    def __init__(self, name: str, command: list[str], executable: str, secret_names: list[str], recording_bytes: int) -> None:
        self.name = name
        self.command = command
        self.executable = executable
        self.secret_names = secret_names
        self.recording_bytes = recording_bytes
        self._wake = threading.Event()  # a reason to end: a signal, the client hung up, the server exited
        self._exited = threading.Event()
        self._reason = ""
        self._stdin_lock = threading.Lock()
        self._stdin_closed = False

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        # A pump woken by bytes waits at most this long for the recorder to let go of the GIL.
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            return self._run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _run(self) -> int:
        try:
            process = subprocess.Popen(
                [self.executable, *self.command[1:]],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            return _fail(126, f"cannot run {self.command[0]}: {exc.strerror or exc}")
        self.process = process
        reaper = Reaper(EXIT_GRACE, TERM_GRACE, KILL_WAIT)
        try:
            reaper.watch(process.pid)
        except OSError:
            pass  # no watchdog: the server may outlive a relay that is killed outright
        recorder = self._recorder(process.pid)
        self.recorder = recorder
        recorder.start()
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        pumps = [
            threading.Thread(target=self._to_server, args=(process.stdin.fileno(),), daemon=True),
            threading.Thread(target=self._pump, args=(process.stdout.fileno(), 1, SERVER), daemon=True),
            threading.Thread(target=self._pump, args=(process.stderr.fileno(), 2, STDERR), daemon=True),
        ]
        for pump in pumps:
            pump.start()
        threading.Thread(target=self._wait_exit, daemon=True).start()
        self._wake.wait()
        if not self._exited.is_set():
            self._stop_server()
        deadline = time.monotonic() + DRAIN_WAIT
        for pump in pumps[1:]:
            pump.join(max(0.0, deadline - time.monotonic()))
        reaper.forget(process.pid)
        code = process.returncode if process.returncode is not None else -9  # alive after SIGKILL: told as killed
        detail = {"code": code} if code >= 0 else {"code": 128 - code, "signal": -code}
        recorder.event(EXIT, **detail)
        recorder.event(CLOSED, reason=self._reason or "the server exited")
        recorder.close(timeout=5.0)
        return int(detail["code"])

    def _recorder(self, pid: int) -> Recorder:
        scrub = Scrubber([*env_secrets(os.environ, self.secret_names), *argv_secrets(self.command)])
        session = os.urandom(8).hex()
        recording = feed = None
        try:
            folder = rendezvous.runtime_dir()
            feed = NotebookFeed(rendezvous.socket_path(self.name, folder))
            parent = rendezvous.recordings_dir(self.name, folder, create=True)
            total = self.recording_bytes
            bounds = {"head_bytes": total // 8, "segment_bytes": max(1, total // 16), "total_bytes": total}
            recording = recordings.start(parent, session, time.time_ns(), **bounds)
        except (OSError, ValueError, NotImplementedError) as exc:
            _fail(0, f"the notebook may miss this session's start: {exc}")
        return Recorder(name=self.name, argv=self.command, pid=pid, scrub=scrub, recording=recording, feed=feed, session=session)

    # ------------------------------------------------------------------ the pumps

    def _pump(self, source: int, target: int, side: str) -> None:
        """Server to client (stdout, and stderr to ours): bytes to the recorder, then on at once."""
        put = self.recorder.put
        writing = True
        while True:
            try:
                data = os.read(source, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                break
            put(side, data)
            if writing:
                try:
                    _write_all(target, data)
                except OSError:  # the client is gone (our stdout broke): end the session; keep recording
                    writing = False
                    if side == SERVER:
                        self._end("the client hung up")
        put(side, b"")

    def _to_server(self, target: int) -> None:
        """Client to server: our stdin to the server's; its end closes the server's stdin."""
        put = self.recorder.put
        while True:
            try:
                data = os.read(0, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                break
            put(CLIENT, data)
            with self._stdin_lock:
                if not self._stdin_closed:
                    try:
                        _write_all(target, data)
                    except OSError:
                        pass  # the server closed its stdin or exited: its exit ends the session
        put(CLIENT, b"")
        self._close_server_stdin()
        self._end("the client hung up")

    def _close_server_stdin(self, wait: float = -1) -> None:
        if not self._stdin_lock.acquire(timeout=wait):
            return  # a write to a server that does not read: the signals that follow end it
        try:
            if not self._stdin_closed:
                self._stdin_closed = True
                assert self.process.stdin is not None
                try:
                    self.process.stdin.close()
                except OSError:
                    pass
        finally:
            self._stdin_lock.release()

    # ------------------------------------------------------------------ the ending

    def _wait_exit(self) -> None:
        self.process.wait()
        self._exited.set()
        self._end("the server exited")

    def _end(self, reason: str) -> None:
        if not self._reason:
            self._reason = reason
        self._wake.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._end(f"the relay got {signal.Signals(signum).name}")

    def _stop_server(self) -> None:
        """As a client ends a server: stdin closed, a grace, SIGTERM, SIGKILL (its whole group)."""
        self._close_server_stdin(wait=EXIT_GRACE)
        kill = getattr(signal, "SIGKILL", signal.SIGTERM)
        for sig, wait in ((None, EXIT_GRACE), (signal.SIGTERM, TERM_GRACE), (kill, KILL_WAIT)):
            if sig is not None:
                try:
                    os.killpg(self.process.pid, sig)  # its whole group: wrappers like npx take their children along
                except (ProcessLookupError, PermissionError, AttributeError):  # (no process groups on Windows)
                    try:
                        self.process.send_signal(sig)
                    except OSError:
                        pass
            if self._exited.wait(wait):
                return


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]
