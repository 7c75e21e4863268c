// mcp-notebook: the front end of an MCP App view (anywidget ES module, no build step).
//
// The app runs in an iframe sandboxed with allow-scripts only: an opaque origin, never the
// notebook's, so it cannot reach the page's DOM, cookies or the kernel's API. Its HTML comes
// as srcdoc with the Content-Security-Policy already in it (made in the kernel). This code
// only carries JSON-RPC: from the app (postMessage) to the kernel (the widget's comm), and
// back. Everything is answered in the kernel, which keeps the trace.

const MAX_RESTORES = 3;
const hosted = new WeakSet(); // models whose app is on screen: one iframe per model

function theme() {
  const light = document.body?.dataset?.jpThemeLight;
  if (light === "false") return "dark";
  if (light === "true") return "light";
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function render({ model, el }) {
  if (hosted.has(model)) {
    el.textContent = "(this MCP App is shown in another view of this output)";
    return;
  }
  hosted.add(model);
  const box = document.createElement("div");
  box.className = "mcp-app";
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("referrerpolicy", "no-referrer");
  iframe.title = model.get("title");
  const border = model.get("prefers_border");
  iframe.style.cssText = `width:100%;height:${model.get("height")}px;border:${border ? "1px solid #8884" : "0"};` +
    "display:block;background:transparent";
  const links = document.createElement("div");
  links.className = "mcp-app-links";
  el.append(box, links);

  model.send({
    kind: "hello",
    page: {
      theme: theme(),
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      width: box.clientWidth || el.clientWidth || null,
    },
  });

  function fromApp(event) {
    if (event.source !== iframe.contentWindow) return;
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (message.method === "ui/notifications/size-changed") {
      const height = Number(message.params?.height);
      if (height > 0) iframe.style.height = `${Math.min(Math.ceil(height), 2000)}px`;
    }
    model.send({ kind: "rpc", message });
  }

  function showLink(id, url) {
    const row = document.createElement("div");
    row.className = "mcp-app-link";
    row.append("The app asks to open: ");
    const a = document.createElement("a");
    a.href = url;
    a.textContent = url; // the full URL, as text
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.addEventListener("click", () => {
      model.send({ kind: "link-clicked", id });
      row.remove();
    });
    row.append(a);
    links.append(row);
  }

  function fromKernel(message) {
    if (message.kind === "rpc") iframe.contentWindow?.postMessage(message.message, "*");
    else if (message.kind === "link") showLink(message.id, message.url);
    else if (message.kind === "remove") {
      iframe.remove();
      box.textContent = `(the MCP App view was closed: ${model.get("closed_reason") || "torn down"})`;
    }
  }

  function load(granted) {
    if (granted.length) iframe.setAttribute("allow", granted.map((p) => `${p} *`).join("; "));
    let ours = true; // the next load is of our document
    let restores = 0;
    iframe.addEventListener("load", () => {
      if (ours) {
        ours = false;
        return;
      }
      // Another document: the app navigated away (leaving our CSP behind), or the notebook
      // moved the frame and it reloaded. Either way load the app afresh, a few times at most.
      if (restores++ < MAX_RESTORES) {
        model.send({ kind: "restart" });
        ours = true;
        iframe.srcdoc = model.get("srcdoc");
        return;
      }
      window.removeEventListener("message", fromApp);
      iframe.remove();
      box.textContent = "(the MCP App kept leaving its page, and was closed)";
      model.send({ kind: "closed" });
    });
    iframe.srcdoc = model.get("srcdoc");
    box.replaceChildren(iframe);
  }

  window.addEventListener("message", fromApp);
  model.on("msg:custom", fromKernel);
  let shownTheme = theme();
  const themeWatch = new MutationObserver(() => {
    if (theme() !== shownTheme) {
      shownTheme = theme();
      model.send({ kind: "context", context: { theme: shownTheme } });
    }
  });
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
  // The cell's width (the window or the notebook's panel resized): the kernel sends
  // host-context-changed when it differs from what the app was last told.
  let shownWidth = null;
  const sizeWatch = new ResizeObserver(() => {
    const width = Math.round(el.clientWidth);
    if (width > 0 && width !== shownWidth) {
      shownWidth = width;
      model.send({ kind: "context", context: { width } });
    }
  });
  sizeWatch.observe(el);
  const asked = model.get("permissions");
  if (asked.length) {
    const ask = document.createElement("div");
    ask.className = "mcp-app-permissions";
    ask.append(`This app asks for: ${asked.join(", ")}. `);
    for (const [label, grant] of [["Allow", true], ["Deny", false]]) {
      const button = document.createElement("button");
      button.textContent = label;
      button.addEventListener("click", () => {
        const granted = grant ? asked : [];
        model.send({ kind: "permissions", granted });
        load(granted);
      });
      ask.append(button);
    }
    box.append(ask);
  } else {
    load([]);
  }

  return () => {
    window.removeEventListener("message", fromApp);
    themeWatch.disconnect();
    sizeWatch.disconnect();
    model.off("msg:custom", fromKernel);
    hosted.delete(model);
    model.send({ kind: "closed" });
  };
}

export default { render };
