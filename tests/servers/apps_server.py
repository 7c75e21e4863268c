"""Test peer: an MCP Apps server built with the official Python SDK (mcp==2.3.0), whose view
probes the host. We did not write its protocol handling: the SDK does; the view is a few
lines of plain JavaScript speaking the Apps JSON-RPC over postMessage, no SDK.

The view (`ui://probe/view`, no `_meta.ui.csp`: the restrictive default applies) shows the
host it was given, the tool input and the tool result, and has buttons that each write what
happened beside them:

* ``#call-app-tool``   tools/call ``echo_app`` (visibility default: the app may call it)
* ``#call-model-only`` tools/call ``model_only`` (visibility ["model"]: must be refused)
* ``#reach-parent``    reads ``window.parent.document`` (the sandbox must stop it)
* ``#fetch``           fetches https://example.com/ (no connectDomains: CSP must stop it)
* ``#say``             ui/message and ui/update-model-context
* ``#open``            ui/open-link https://example.com/docs?from=app
* ``#navigate``        leaves its page for another document (the host must load the app afresh)

Tools: ``probe(label)`` (the view), ``echo_app(text)``, ``model_only()``, ``app_only()``
(visibility ["app"]), ``flat()`` (names the view with the deprecated flat key only) and
``touch_view()`` (changes the view's HTML and sends notifications/resources/updated for it),
``broken()`` (a view whose call fails with a JSON-RPC error) and ``camera()`` (the same page
as ``ui://probe/camera``, whose ``_meta.ui.permissions`` ask for the camera).

Usage: python apps_server.py [--transport stdio|streamable-http] [--port N]
"""

import argparse

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

VIEW = "ui://probe/view"
CAMERA_VIEW = "ui://probe/camera"
MIME = "text/html;profile=mcp-app"

SCRIPT = r"""
let next = 1;
const pending = new Map();
const show = (id, text) => { document.getElementById(id).textContent = text; };
function request(method, params) {
  const id = next++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function notify(method, params) { window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*"); }
const texts = (result) => (result.content || []).map((c) => c.text).join(" ");
window.addEventListener("message", (event) => {
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && pending.has(m.id)) {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(m.error); else p.resolve(m.result);
  } else if (m.method === "ui/notifications/tool-input") {
    show("input", JSON.stringify(m.params.arguments));
  } else if (m.method === "ui/notifications/tool-result") {
    show("result", texts(m.params));
  } else if (m.method === "ui/notifications/tool-cancelled") {
    show("result", "cancelled: " + m.params.reason);
  } else if (m.method === "ui/resource-teardown") {
    window.parent.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
  }
});
const on = (id, fn) => document.getElementById(id).addEventListener("click", fn);
on("call-app-tool", () => request("tools/call", { name: "echo_app", arguments: { text: "from the app" } })
  .then((r) => show("app-tool", "ok: " + texts(r)), (e) => show("app-tool", "refused: " + e.message)));
on("call-model-only", () => request("tools/call", { name: "model_only", arguments: {} })
  .then((r) => show("model-only", "ok: " + texts(r)), (e) => show("model-only", "refused: " + e.message)));
on("reach-parent", () => {
  try { show("parent", "reached: " + window.parent.document.title); window.parent.document.body.dataset.pwned = "1"; }
  catch (e) { show("parent", "blocked: " + e.name); }
});
on("fetch", () => fetch("https://example.com/")
  .then(() => show("fetched", "fetched"), (e) => show("fetched", "blocked: " + e.name)));
on("say", () => Promise.all([
  request("ui/message", { role: "user", content: { type: "text", text: "hello from the app" } }),
  request("ui/update-model-context", { content: [{ type: "text", text: "the app's context" }] }),
]).then(() => show("said", "said")));
on("open", () => request("ui/open-link", { url: "https://example.com/docs?from=app" })
  .then(() => show("opened", "opened"), (e) => show("opened", "refused: " + e.message)));
on("navigate", () => { window.location.href = "data:text/html,<p>somewhere else</p>"; });
request("ui/initialize", { appCapabilities: {}, appInfo: { name: "probe", version: "1" }, protocolVersion: "2026-01-26" })
  .then((r) => {
    show("host", r.hostInfo.name + " " + r.hostContext.theme + " " + r.hostContext.displayMode);
    notify("ui/notifications/initialized", {});
    notify("ui/notifications/size-changed", { width: 400, height: document.body.scrollHeight + 20 });
  });
"""


def page(version: int) -> str:
    buttons = "".join(
        f'<p><button id="{b}">{b}</button> <span id="{s}"></span></p>'
        for b, s in [
            ("call-app-tool", "app-tool"),
            ("call-model-only", "model-only"),
            ("reach-parent", "parent"),
            ("fetch", "fetched"),
            ("say", "said"),
            ("open", "opened"),
            ("navigate", "navigated"),
        ]
    )
    return (
        f"<!DOCTYPE html><html><head><title>probe v{version}</title></head><body>"
        f'<p>view <span id="version">v{version}</span> host <span id="host"></span></p>'
        f'<p>input <span id="input"></span> result <span id="result">waiting</span></p>'
        f"{buttons}<script>{SCRIPT}</script></body></html>"
    )


def build() -> MCPServer:
    mcp = MCPServer(name="apps-probe", version="1.0.0", log_level="ERROR")
    state = {"version": 1}

    @mcp.tool(description="Show the probe view.", meta={"ui": {"resourceUri": VIEW}})
    def probe(label: str = "probe") -> str:
        return f"probe ready: {label}"

    @mcp.tool(description="Echo, callable by the app.")
    def echo_app(text: str) -> str:
        return f"echo: {text}"

    @mcp.tool(description="Count with progress and a log line per step, callable by the app.")
    async def count_app(ctx: Context, steps: int = 3) -> str:
        for step in range(1, steps + 1):
            await ctx.info(f"counted {step}")
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"counted to {steps}"

    @mcp.tool(description="For the model only.", meta={"ui": {"visibility": ["model"]}})
    def model_only() -> str:
        return "the model's secret"

    @mcp.tool(description="For the app only.", meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}})
    def app_only() -> str:
        return "app only"

    @mcp.tool(description="Names its view the deprecated way.", meta={"ui/resourceUri": VIEW})
    def flat() -> str:
        return "flat"

    @mcp.tool(description="A view whose call fails.", meta={"ui": {"resourceUri": VIEW}})
    def broken() -> str:
        raise MCPError(-32603, "broken on purpose")

    @mcp.tool(description="Change the view and say so (notifications/resources/updated).")
    async def touch_view(ctx: Context) -> str:
        state["version"] += 1
        await ctx.session.send_resource_updated(VIEW)  # legacy sessions (no subscribe needed by this client)
        await ctx.notify_resource_updated(VIEW)  # subscriptions/listen streams (2026-07-28)
        return f"view v{state['version']}"

    mcp.resource(VIEW, name="probe view", mime_type=MIME)(lambda: page(state["version"]))

    @mcp.tool(description="The probe view, asking for the camera.", meta={"ui": {"resourceUri": CAMERA_VIEW}})
    def camera() -> str:
        return "camera view"

    # The SDK puts this _meta on the resources/list entry and on the read content alike.
    mcp.resource(CAMERA_VIEW, name="camera view", mime_type=MIME, meta={"ui": {"permissions": {"camera": {}}}})(
        lambda: page(state["version"])
    )
    return mcp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", default="stdio", choices=["stdio", "streamable-http"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    server = build()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
