"""The child processes of this process, read from /proc: what a test left running.

Linux only (where /proc exists); elsewhere nothing is found, so nothing is reported.
"""

from __future__ import annotations

import os
from pathlib import Path


def _read_stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, comm) of pid from /proc, or None if it is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
        return None
    # comm is in parentheses and may itself contain spaces or ')'.
    lparen, rparen = data.find("("), data.rfind(")")
    if lparen < 0 or rparen < 0:
        return None
    comm = data[lparen + 1 : rparen]
    fields = data[rparen + 2 :].split()
    try:
        return int(fields[1]), fields[0], comm
    except (IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def descendants(root: int | None = None) -> dict[int, str]:
    """Live (non-zombie) descendants of ``root`` (default: this process): {pid: cmdline}."""
    root = os.getpid() if root is None else root
    if not Path("/proc").is_dir():
        return {}
    parents: dict[int, int] = {}
    states: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        stat = _read_stat(int(entry.name))
        if stat is not None:
            parents[int(entry.name)], states[int(entry.name)] = stat[0], stat[1]
    found: dict[int, str] = {}
    for pid in parents:
        seen: set[int] = set()
        cur = pid
        while cur not in seen and cur > 1:
            seen.add(cur)
            cur = parents.get(cur, 0)
            if cur == root:
                if states.get(pid) != "Z":
                    found[pid] = _cmdline(pid)
                break
    return found


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
