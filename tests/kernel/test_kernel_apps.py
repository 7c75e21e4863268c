"""An MCP App view in a real kernel, with the test playing the browser's widget front end
over the comm: what `app_widget.js` would relay from the iframe (`{"kind": "rpc", ...}`) and
what it would get back. The server is tests/servers/apps_server.py (the official SDK).

The view is shown by `%mcp call TOOL`, its text result kept beside it for saved notebooks;
the app's messages are answered after the cell ended and while another cell is busy (the
answering subshell, as for the question forms).
"""

from __future__ import annotations

import json
import sys
import time
from queue import Empty
from typing import Any

import pytest
from support.kernels import Cell, Kernel, json_line, ok
from support.servers import SERVERS_DIR

pytestmark = [pytest.mark.kernel]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WAIT = 60.0  # a hang guard, not a timing claim
INIT = {"appCapabilities": {}, "appInfo": {"name": "t", "version": "1"}, "protocolVersion": "2026-01-26"}


class AppFrontEnd:
    """The app frame's comm, played: send what the iframe posts, read what the kernel relays."""

    def __init__(self, kernel: Kernel, comm_id: str) -> None:
        self.kc, self.comm_id = kernel.kc, comm_id
        self.received: list[dict[str, Any]] = []
        self.closed = False  # the kernel closed the comm: the view is no longer served

    def send(self, content: dict[str, Any]) -> None:
        data = {"method": "custom", "content": content}
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": self.comm_id, "data": data}))

    def post(self, message: dict[str, Any]) -> None:
        self.send({"kind": "rpc", "message": message})

    def wait_for(self, match: Any) -> dict[str, Any]:
        """The first JSON-RPC message relayed to the app that `match`es (reading iopub as needed)."""
        deadline = time.monotonic() + WAIT
        while True:
            for content in self.received:
                if content.get("kind") == "rpc" and match(content["message"]):
                    return content["message"]  # type: ignore[no-any-return]
                if content.get("kind") != "rpc" and match(content):
                    return content
            assert time.monotonic() < deadline, f"nothing matched; relayed so far: {self.received}"
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except Empty:
                continue
            data = msg["content"].get("data") or {}
            if msg["msg_type"] == "comm_close" and msg["content"].get("comm_id") == self.comm_id:
                self.closed = True
                self.received.append({"kind": "comm_close"})
            if msg["msg_type"] == "comm_msg" and msg["content"].get("comm_id") == self.comm_id and data.get("method") == "custom":
                self.received.append(data["content"])

    def answer(self, request_id: Any) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)


def test_a_view_in_the_cell_is_served_over_its_comm_after_and_during_cells(kernel: Kernel) -> None:
    command = json.dumps([sys.executable, str(SERVERS_DIR / "apps_server.py")])
    out = ok(
        kernel.run(
            f"import json, threading, mcp_notebook\n"
            f"conn = mcp_notebook.connect({command}, name='probe', era='legacy')\n"
            f"print('EXT', json.dumps(sorted(conn._session.client.capabilities.get('extensions', {{}}))))"
        )
    )
    assert json_line(out, "EXT") == ["io.modelcontextprotocol/ui"]  # on by default in a kernel

    cell = Cell(kernel.kc, "%mcp call probe label=x")
    ok(cell.finish(WAIT))
    shown = [m["content"]["data"] for m in cell.messages if m["msg_type"] == "execute_result"]
    assert len(shown) == 1 and WIDGET_MIME in shown[0]
    assert "probe ready: x" in shown[0]["text/html"] and "probe ready: x" in shown[0]["text/plain"]  # saved notebooks
    frames = [m["content"] for m in cell.messages if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("srcdoc")]
    assert len(frames) == 1
    state = frames[0]["data"]["state"]
    assert state["srcdoc"].startswith('<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src')
    assert "connect-src &#x27;none&#x27;" in state["srcdoc"]
    app = AppFrontEnd(kernel, frames[0]["comm_id"])

    app.send({"kind": "hello", "page": {"theme": "dark", "locale": "fr-FR", "timeZone": "Europe/Paris", "width": 500}})
    app.post({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": INIT})
    context = app.answer(1)["result"]["hostContext"]
    assert (context["theme"], context["locale"], context["timeZone"]) == ("dark", "fr-FR", "Europe/Paris")
    app.post({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
    assert app.wait_for(lambda m: m.get("method") == "ui/notifications/tool-input")["params"] == {"arguments": {"label": "x"}}
    result = app.wait_for(lambda m: m.get("method") == "ui/notifications/tool-result")
    app.send({"kind": "context", "context": {"width": 640, "theme": "light"}})  # the cell resized, the theme went light
    changed = app.wait_for(lambda m: m.get("method") == "ui/notifications/host-context-changed")
    assert changed["params"] == {"theme": "light", "containerDimensions": {"maxHeight": 2000, "width": 640}}
    assert result["params"]["content"][0]["text"] == "probe ready: x"
    app.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo_app", "arguments": {"text": "hi"}}})
    assert app.answer(2)["result"]["content"][0]["text"] == "echo: hi"
    app.post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "model_only", "arguments": {}}})
    assert "not callable by apps" in app.answer(3)["error"]["message"]
    app.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "count_app", "arguments": {"steps": 2}}})
    assert app.answer(5)["result"]["content"][0]["text"] == "counted to 2"
    out = ok(kernel.run("print('UNDER', json.dumps(Out[2].app.view.on_change.__self__.records.value))"))
    under = json_line(out, "UNDER")  # the records under the view: the app's call's log and progress lines
    assert "count_app: [info] counted 2" in under and "2/2 step 2 of 2" in under

    # While another cell is busy, the app is still answered (the frame's comm goes to the subshell).
    busy = Cell(
        kernel.kc,
        "view = Out[2].app.view\n"
        "said = threading.Event()\n"
        "redraw = view.on_change\n"
        "view.on_change = lambda: (redraw(), said.set())\n"
        "print('WAITING', flush=True)\n"
        "print('SAID', json.dumps([said.wait(60), [m['content']['text'] for m in view.messages]]))",
    )
    assert busy.wait_for_output("WAITING", WAIT)
    said = {"role": "user", "content": {"type": "text", "text": "while busy"}}
    app.post({"jsonrpc": "2.0", "id": 4, "method": "ui/message", "params": said})
    assert json_line(ok(busy.finish(WAIT)), "SAID") == [True, ["while busy"]]  # (its reply went by: see the trace)

    out = ok(
        kernel.run(
            "bridge = [(e.direction, e.method, e.id) for e in conn.trace.frames() if e.detail.get('via') == 'app']\n"
            "wire = [e.message['params']['name'] for e in conn.trace.frames('out')"
            " if e.method == 'tools/call' and not e.detail]\n"
            "print('TRACE', json.dumps({'bridge': bridge, 'wire': wire}))"
        )
    )
    trace = json_line(out, "TRACE")
    assert ["in", "tools/call", 2] in trace["bridge"] and ["in", "ui/message", 4] in trace["bridge"]
    assert ["out", None, 4] in trace["bridge"]
    assert ["out", None, 3] in trace["bridge"]  # the refusal is in the trace too
    assert trace["wire"] == ["probe", "echo_app", "count_app"]  # model_only never reached the server
    closing = Cell(kernel.kc, "conn.close()")
    ok(closing.finish(WAIT))
    relayed = [
        m["content"]["data"]["content"]
        for m in closing.messages
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == app.comm_id
    ]
    assert [r["message"]["method"] for r in relayed] == ["ui/resource-teardown"]
    assert relayed[0]["message"]["params"] == {"reason": "the connection closed"}


def test_a_view_whose_output_goes_away_is_torn_down_then_no_longer_served(kernel: Kernel) -> None:
    command = json.dumps([sys.executable, str(SERVERS_DIR / "apps_server.py")])
    ok(kernel.run(f"import json, mcp_notebook\nconn = mcp_notebook.connect({command}, name='probe', era='legacy')"))
    cell = Cell(kernel.kc, "%mcp call probe label=y")
    ok(cell.finish(WAIT))
    frame = next(
        m["content"] for m in cell.messages if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("srcdoc")
    )
    app = AppFrontEnd(kernel, frame["comm_id"])
    app.send({"kind": "hello", "page": {"theme": "light", "width": 400}})
    app.post({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": INIT})
    app.answer(1)
    app.post({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
    app.wait_for(lambda m: m.get("method") == "ui/notifications/tool-result")

    # What app_widget.js does when the output is cleared or the cell runs again: the frame waits,
    # hidden, while the app is asked to wind down; the request goes to the kernel too.
    teardown = {"jsonrpc": "2.0", "id": "teardown-view", "method": "ui/resource-teardown", "params": {"reason": "gone"}}
    app.send({"kind": "teardown", "message": teardown})
    app.post({"jsonrpc": "2.0", "id": "teardown-view", "result": {}})  # the app's answer
    assert app.wait_for(lambda m: m.get("kind") == "remove") == {"kind": "remove", "reason": "gone"}  # the front end's words
    app.wait_for(lambda m: m.get("kind") == "comm_close")  # the kernel stops serving the view

    out = ok(
        kernel.run(
            "view = Out[2].app.view\n"
            "bridge = [(e.direction, e.method, e.id) for e in conn.trace.frames() if e.detail.get('via') == 'app']\n"
            "print('VIEW', json.dumps({'state': view.state, 'bridge': bridge[-2:]}))\nconn.close()"
        )
    )
    seen = json_line(out, "VIEW")
    assert seen == {
        "state": "torn down",
        "bridge": [["out", "ui/resource-teardown", teardown["id"]], ["in", None, teardown["id"]]],
    }
