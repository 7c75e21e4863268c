"""The watchdog process: when the client process dies, it kills the server groups it left.

`reaper.Reaper` starts it as a script (`python -I -S watchdog.py CLIENT_PID EXIT_GRACE
TERM_GRACE KILL_WAIT`; the pid only names it in `ps`) with the read end of a pipe as its
stdin, whose only write end the client holds. The client writes `+GROUP` when it spawns a server (the leader of process
group GROUP) and `-GROUP` when that leader exited. EOF on the pipe means the client is
gone, however it went: the watchdog then does to each group still alive what the client's
own close would have done: wait for it to go (its stdin hit EOF too), SIGTERM, SIGKILL.

It is per user: it runs as the client's user, hears only the client (the pipe is the one
channel; nothing is written to disk), and signals only groups with a running member of its
own user (where /proc tells), so a group id that another user's process has taken since
the server went is left alone.

The rule: this file imports the standard library only, and little of it (it runs without
the package, and its start is paid once per client process); nothing here acts before EOF
but bookkeeping.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable

POLL = 0.05


def alive(group: int) -> bool:
    """Whether the process group still has a member (a zombie counts)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(groups: Iterable[int]) -> set[int]:
    """The groups with a member of our user that still runs. A zombie does not: orphaned by the
    client's death, it waits for init to reap it, which may take seconds, yet killpg(g, 0) counts it."""
    live = {group for group in groups if alive(group)}
    if not live or not os.path.isdir("/proc"):
        return live
    found: set[int] = set()
    user = os.getuid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                data = stat.read()
                owner = os.fstat(stat.fileno()).st_uid
        except OSError:
            continue
        if owner != user:
            continue
        state, _ppid, group = data[data.rfind(b")") + 2 :].split()[:3]
        if state not in (b"Z", b"X") and int(group) in live:
            found.add(int(group))
    return found


def listen(groups: set[int]) -> None:
    """Keep `groups` up to date from stdin until its EOF: the client is gone."""
    pending = b""
    while chunk := os.read(0, 4096):
        *lines, pending = (pending + chunk).split(b"\n")
        groups.update(int(line[1:]) for line in lines if line[:1] == b"+" and line[1:].isdigit())
        # A "-" (a leader exited) asks only for this: drop the groups with nobody left in them.
        groups -= {group for group in groups if not alive(group)}


def reap(groups: set[int], exit_grace: float, term_grace: float, kill_wait: float) -> None:
    """Wait for the groups to leave on their own, then SIGTERM them, then SIGKILL them."""
    for sig, wait in ((0, exit_grace), (signal.SIGTERM, term_grace), (signal.SIGKILL, kill_wait)):
        live = running(groups)
        if not live:
            return
        for group in live:  # signal 0 sends nothing: the first round only waits
            try:
                os.killpg(group, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while running(live) and time.monotonic() < deadline:
            time.sleep(POLL)


def main(argv: list[str]) -> None:
    """Detach from the launcher, listen until EOF, then reap."""
    exit_grace, term_grace, kill_wait = (float(value) for value in argv[1:4])
    if os.fork():  # the launcher exits at once, so we are no one's child to reap
        os._exit(0)
    groups: set[int] = set()
    listen(groups)
    reap(groups, exit_grace, term_grace, kill_wait)


if __name__ == "__main__":
    main(sys.argv[1:])
