"""The demo server's MCP App (`io.modelcontextprotocol/ui`): a live view of its counters.

Offered only to clients that declare the extension (as SEP-1865 asks of servers): legacy
sessions by their `initialize` capabilities, modern requests by the capabilities in their
`_meta`. Then the server also has:

* ``counters()``: the counters as text and structured content; its view is
  ``ui://demo/counters``.
* ``counters-poll()``: the same, for the view only (visibility ["app"]): the view polls it.
* ``resources/read`` of ``ui://demo/counters``: a small HTML page speaking the Apps JSON-RPC
  over postMessage (no SDK), with no external origins (the host's restrictive CSP holds).
"""

from __future__ import annotations

from typing import Any

from ..protocol import jsonrpc as rpc
from ._app import App, Call, RpcError

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEW = "ui://demo/counters"

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "counters",
        "description": "The server's ping and request counters; with MCP Apps, a live view of them.",
        "inputSchema": {"type": "object", "properties": {}},
        "_meta": {"ui": {"resourceUri": VIEW}},
    },
    {
        "name": "counters-poll",
        "description": "The counters, for the counters view to poll (apps only).",
        "inputSchema": {"type": "object", "properties": {}},
        "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}},
    },
)

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>demo counters</title>
<style>
  #about { margin: 0 0 6px; color: #868e96; max-width: 40em; }
  body { font: 13px var(--font-sans, system-ui, sans-serif); margin: 8px; color: var(--fg); background: transparent; }
  :root { --fg: #222; } :root.dark { --fg: #ddd; }
  td { padding: 1px 10px 1px 0; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
  button { margin-right: 6px; }
</style></head>
<body>
<p id="about">The demo server's own counters, read again each second while live: "pings received" are the
pings this notebook's client sent the server. The tool's text result counted them when it was called.</p>
<table id="counters"><tr><td>waiting for the tool result</td></tr></table>
<p><button id="live">pause</button><button id="share">share with the notebook</button>
<span id="status"></span></p>
<script>
let next = 1, live = true, latest = null;
const pending = new Map();
const $ = (id) => document.getElementById(id);
function request(method, params) {
  const id = next++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function notify(method, params) { window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*"); }
function show(result) {
  latest = result.structuredContent || { counters: result.content[0].text };
  $("counters").replaceChildren(...Object.entries(latest).map(([name, value]) => {
    const row = document.createElement("tr");
    const label = document.createElement("td"), number = document.createElement("td");
    label.textContent = name.replaceAll("_", " "); number.textContent = value; number.className = "n";
    row.append(label, number);
    return row;
  }));
  $("status").textContent = "read at " + new Date().toTimeString().slice(0, 8);  // 24-hour, as the notebook's times
  notify("ui/notifications/size-changed", { width: document.body.scrollWidth, height: document.body.scrollHeight + 16 });
}
window.addEventListener("message", (event) => {
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && pending.has(m.id)) {
    const p = pending.get(m.id); pending.delete(m.id);
    m.error ? p.reject(m.error) : p.resolve(m.result);
  } else if (m.method === "ui/notifications/tool-result") {
    show(m.params);
  } else if (m.method === "ui/resource-teardown") {
    live = false;
    window.parent.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
  }
});
$("live").onclick = () => { live = !live; $("live").textContent = live ? "pause" : "resume"; };
$("share").onclick = () => latest && request("ui/update-model-context", { structuredContent: latest })
  .then(() => { $("status").textContent = "shared"; });
setInterval(() => {
  if (live) request("tools/call", { name: "counters-poll", arguments: {} }).then(show, (e) => {
    $("status").textContent = "stopped: " + e.message; live = false;
  });
}, 1000);
request("ui/initialize", { appCapabilities: {}, appInfo: { name: "demo counters", version: "1" },
                           protocolVersion: "2026-01-26" }).then((r) => {
  if (r.hostContext && r.hostContext.theme === "dark") document.documentElement.classList.add("dark");
  notify("ui/notifications/initialized", {});
});
</script></body></html>
"""


def wanted(capabilities: Any) -> bool:
    """Whether the client declared MCP Apps with HTML views."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    ui = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    return isinstance(ui, dict) and MIME in (ui.get("mimeTypes") or [])


def capabilities(base: dict[str, Any], apps: bool) -> dict[str, Any]:
    """The server's capabilities: `resources` too when the client takes apps (the view is one)."""
    return {**base, "resources": {}} if apps and "resources" not in base else base


def tools(apps: bool) -> list[dict[str, Any]]:
    return [dict(tool) for tool in TOOLS] if apps else []


def read(call: Call) -> dict[str, Any]:
    """`resources/read`: the view; any other URI is not found (-32002)."""
    uri = call.params.get("uri")
    if uri != VIEW:
        raise RpcError(-32002, f"Resource not found: {uri!r}", {"uri": uri})
    return {"contents": [{"uri": VIEW, "mimeType": MIME, "text": PAGE, "_meta": {"ui": {"prefersBorder": True}}}]}


async def counters_tool(app: App, call: Call, args: dict[str, Any]) -> dict[str, Any]:
    counts = app.counters.as_dict()
    text = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in counts.items())
    said = f"the demo server's counters at this call (pings received: from this client): {text}"
    result: dict[str, Any] = {"content": [{"type": "text", "text": said}]}
    if call.at_least("2025-06-18"):
        result["structuredContent"] = counts
    return result


FUNCTIONS = {"counters": counters_tool, "counters-poll": counters_tool}


def not_offered(method: str) -> RpcError:
    return RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {method} (declare the {EXTENSION} extension for it)")
