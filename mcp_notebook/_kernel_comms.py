"""Clicks on a question widget reach Python while the cell that shows it is still running.

A Jupyter kernel handles widget messages on the thread that runs cells, so a cell that
waits for a tool result cannot also receive the click that answers the server's question.
ipykernel 7 has kernel subshells (JEP 91): threads with their own event loop that take
shell messages, and it routes each comm message to the subshell a comm names. We ask our
own kernel for one subshell, over its control channel as any frontend would, and route
the question widgets' comms to it; the click then runs there and answers the `Question`.

In kernels without that routing (older ipykernel, other kernels) the widget says so and
points to what works there: an answering callback.
"""

from __future__ import annotations

import threading
from typing import Any

CREATE_TIMEOUT = 5.0  # seconds to wait for the kernel's create_subshell_reply

_lock = threading.Lock()
_subshell: dict[str, str | None] = {}  # connection file -> subshell id (None: not available)


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def _supports_routing(kernel: Any) -> bool:
    """Subshells exist and comm messages are routed by their comm's `_reply_subshell_for`."""
    if getattr(kernel, "shell_channel_thread", None) is None:
        return False
    try:
        from ipykernel.comm.comm import BaseComm
    except ImportError:
        return False
    return hasattr(BaseComm, "_reply_subshell_for")


def _create_subshell(connection_file: str) -> str | None:
    """Ask the kernel (ourselves) for a subshell over its control channel; its id, or None."""
    import zmq
    from jupyter_client.blocking import BlockingKernelClient

    context = zmq.Context()
    try:
        client = BlockingKernelClient(connection_file=connection_file, context=context)
        client.load_connection_file()
        socket = client.connect_control()
        try:
            client.session.send(socket, "create_subshell_request", {})
            if not socket.poll(int(CREATE_TIMEOUT * 1000)):
                return None
            _, reply = client.session.recv(socket, mode=0)
        finally:
            socket.close(linger=0)
    except Exception:  # noqa: BLE001 - no subshell means only that clicks wait for the cell
        return None
    finally:
        context.destroy(linger=0)
    content = (reply or {}).get("content") or {}
    subshell_id = content.get("subshell_id")
    return subshell_id if content.get("status") == "ok" and isinstance(subshell_id, str) else None


def answering_subshell() -> str | None:
    """The id of the subshell that takes question clicks in this kernel, made on first use."""
    kernel = _kernel()
    if kernel is None or not _supports_routing(kernel):
        return None
    try:
        from ipykernel.connect import get_connection_file

        connection_file = get_connection_file()
    except Exception:  # noqa: BLE001 - an embedded kernel without a connection file
        return None
    with _lock:
        if connection_file not in _subshell:
            _subshell[connection_file] = _create_subshell(connection_file)
        return _subshell[connection_file]


def _widget_tree(widget: Any) -> list[Any]:
    """The widget and every widget it holds (children, layout, style), each once."""
    from ipywidgets import Widget

    found: dict[int, Any] = {}
    todo = [widget]
    while todo:
        current = todo.pop()
        if not isinstance(current, Widget) or id(current) in found:
            continue
        found[id(current)] = current
        for name in current.keys:
            value = getattr(current, name, None)
            todo.extend(value if isinstance(value, (list, tuple)) else [value])
    return list(found.values())


def take_clicks_while_busy(widget: Any) -> bool:
    """Route the widget's messages to the answering subshell; False where the kernel cannot."""
    subshell_id = answering_subshell()
    if subshell_id is None:
        return False
    for part in _widget_tree(widget):
        comm = getattr(part, "comm", None)
        if comm is not None:
            comm._reply_subshell_for = lambda data, default, _id=subshell_id: _id
    return True
