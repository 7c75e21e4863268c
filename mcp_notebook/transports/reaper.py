"""The reaper: no stdio server, nor anything in its process group, outlives this process.

Closing a session stops its server (the spec's close stdin, wait, SIGTERM, SIGKILL), and
the runtime closes every session at exit; neither runs when this process is killed
(SIGKILL, a SIGTERM nobody handles, a kernel killed by its manager). So a watchdog process
(watchdog.py) holds the read end of a pipe whose only write end is ours: the OS closes
that end however we die, and on its EOF the watchdog stops every server group we still
had. The rule: one watchdog per process, started with the first server, never waited
for (what we write waits in the pipe until it reads), and told one short line per spawn
and per exit, never per frame. It runs in a session of its own and is reparented away from
us, so no signal to our process group (a kernel interrupt, the kernel manager's kill)
reaches it and no one has to reap it.

Not PR_SET_PDEATHSIG: it is Linux only, it fires when the forking *thread* exits (ours
are pool threads), it reaches the leader and not its group, and it needs a preexec_fn,
which puts every spawn on the slow path that is unsafe with threads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

WATCHDOG = Path(__file__).with_name("watchdog.py")

# How a stdio server is ended (the spec's shutdown): its stdin closed, EXIT_GRACE s to exit, then
# SIGTERM and TERM_GRACE s, then SIGKILL and KILL_WAIT s. Here, not in stdio.py, so the tap's relay
# shares them without importing the transport's event loop machinery (it must start fast).
EXIT_GRACE = 2.0
TERM_GRACE = 2.0
KILL_WAIT = 5.0


class Reaper:
    """Registers server process groups with this process's watchdog, starting it when needed."""

    def __init__(self, exit_grace: float, term_grace: float, kill_wait: float) -> None:
        self._graces = (exit_grace, term_grace, kill_wait)
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._launcher: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()
        os.register_at_fork(after_in_child=self._after_fork)

    def watch(self, group: int) -> None:
        """Kill `group` if this process dies before the group ends; OSError if no watchdog starts."""
        with self._lock:
            self._groups.add(group)
            if not self._send(f"+{group}\n"):
                self._restart()

    def forget(self, group: int) -> None:
        """The group's leader exited: the watchdog drops the group once nothing is left in it."""
        with self._lock:
            self._groups.discard(group)
            if not self._send(f"-{group}\n") and self._groups:
                try:
                    self._restart()
                except OSError:
                    pass  # the next watch() tries again, and says so if it cannot

    def _send(self, line: str) -> bool:
        if self._launcher is not None and self._launcher.poll() is not None:
            self._launcher = None  # reaped: it exits as soon as the watchdog has forked
        if self._fd is None:
            return False
        try:
            os.write(self._fd, line.encode())
        except OSError:  # the watchdog is gone (EPIPE): the caller starts another
            os.close(self._fd)
            self._fd = None
            return False
        return True

    def _restart(self) -> None:
        """Start a watchdog and tell it every group we still watch."""
        self._start()
        if not self._send("".join(f"+{group}\n" for group in sorted(self._groups))):
            raise OSError("the watchdog exited as it started")

    def _start(self) -> None:
        if not sys.executable:
            raise OSError("no Python interpreter to run it")
        read_end, self._fd = os.pipe()  # neither end is inherited by what we spawn
        try:
            self._launcher = subprocess.Popen(
                [sys.executable, "-I", "-S", str(WATCHDOG), str(os.getpid()), *map(str, self._graces)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise
        finally:
            os.close(read_end)

    def _after_fork(self) -> None:
        """A forked child must not hold our end open (its parent's death would go unseen),
        and watches only what it spawns itself."""
        self._lock = threading.Lock()
        self._groups = set()
        self._launcher = None
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


def pid_alive(pid: int) -> bool:
    """Whether a process of this id exists (one of another user's counts: it is there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
