"""Starting the demo server as a child process: its argv, and an HTTP server on a free port."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections import deque
from typing import IO, Any

from ._app import ERAS
from ._faults import BY_NAME, check_all
from ._oauth_settings import OAuthSettings

TRANSPORTS = ("stdio", "http")
LISTENING = re.compile(r"^listening on (http://127\.0\.0\.1:\d+/mcp)$")


def command(
    transport: str = "stdio",
    era: str = "legacy",
    *,
    port: int | None = None,
    ping_interval: float | None = None,
    exit_with_stdin: bool = False,
    oauth: OAuthSettings | None = None,
    **faults: Any,
) -> list[str]:
    """The argv that runs the demo server with this interpreter, e.g. for a stdio connection.

    `faults` are the fault switches by name (`pong_delay_ms=200`, `ignore_pings=True`,
    `flood=10`, ...); they are checked here, so a typo fails before anything starts.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {TRANSPORTS}, not {transport!r}")
    if era not in ERAS:
        raise ValueError(f"era must be one of {ERAS}, not {era!r}")
    if port is not None and transport != "http":
        raise ValueError("port is for the http transport")
    if oauth is not None and transport != "http":
        raise ValueError("oauth is for the http transport")
    argv = [sys.executable, "-m", "mcp_notebook.demo_server", "--transport", transport, "--era", era]
    if port is not None:
        argv += ["--port", str(int(port))]
    if ping_interval:
        argv += ["--ping-interval", repr(float(ping_interval))]
    for name, value in check_all(faults).items():
        spec = BY_NAME[name]
        if spec.kind is not bool:
            argv += [spec.flag, str(value)]
        elif value:
            argv.append(spec.flag)
    if exit_with_stdin:
        argv.append("--exit-with-stdin")
    if oauth is not None:
        argv += oauth.argv()
    return argv


class LineLog:
    """The lines of a byte stream (a child's stderr), read by a daemon thread, to look at or wait for."""

    def __init__(self, stream: IO[bytes], keep: int = 2000) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        self.ended = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), name="demo-server stderr", daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        try:
            for raw in stream:
                with self._changed:
                    self.lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
                    self._changed.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self._changed:
                self.ended = True
                self._changed.notify_all()

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> re.Match[str]:
        """The first line (already read or still to come) that `pattern` matches (re.search).

        Raises EOFError if the stream ends first, TimeoutError after `timeout` seconds.
        """
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        found: list[re.Match[str]] = []

        def match() -> bool:
            found[:] = [m for m in map(regex.search, self.lines) if m][:1]
            return bool(found) or self.ended

        with self._changed:
            if not self._changed.wait_for(match, timeout):
                raise TimeoutError(f"no line matching {regex.pattern!r} within {timeout} s; last lines: {self.tail()}")
        if not found:
            raise EOFError(f"the stream ended without a line matching {regex.pattern!r}; last lines: {self.tail()}")
        return found[0]

    def tail(self, count: int = 10) -> list[str]:
        return list(self.lines)[-count:]

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)


class DemoServerProcess(subprocess.Popen[bytes]):
    """The demo server as a child process; its stderr lines are in `stderr_log`.

    `stop()` (also on leaving a `with` block) closes its stdin, which ends a server
    started with `--exit-with-stdin`, and terminates it if it does not exit.
    """

    url: str | None = None

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert self.stderr is not None
        self.stderr_log = LineLog(self.stderr)

    def stop(self, timeout: float = 5.0) -> int:
        """Stop the server and reap it; its exit code."""
        if self.stdin is not None and not self.stdin.closed:
            try:
                self.stdin.close()
            except OSError:
                pass
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.terminate()
            try:
                self.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                self.wait()
        self.stderr_log.join(timeout)
        return self.returncode

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
        super().__exit__(*exc_info)


def start_http(
    era: str = "legacy",
    *,
    port: int = 0,
    ping_interval: float | None = None,
    timeout: float = 30.0,
    oauth: OAuthSettings | None = None,
    **faults: Any,
) -> tuple[DemoServerProcess, str]:
    """Start the demo server over HTTP (a free port by default); (process, url) once it listens.

    The server exits when the process's stdin closes, so it does not outlive its
    parent (a kernel); call `process.stop()` to stop it sooner.
    """
    argv = command("http", era, port=port, ping_interval=ping_interval, exit_with_stdin=True, oauth=oauth, **faults)
    process = DemoServerProcess(argv)
    try:
        url: str = process.stderr_log.wait_for(LISTENING, timeout).group(1)
    except BaseException:
        process.stop()
        raise
    process.url = url
    return process, url
