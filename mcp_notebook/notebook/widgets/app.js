// mcp-notebook: the front end of an MCP App view (anywidget ES module, no build step).
//
// The app runs in an iframe sandboxed with allow-scripts only: an opaque origin, never the
// notebook's, so it cannot reach the page's DOM, cookies or the kernel's API. Its HTML comes
// as srcdoc with the Content-Security-Policy already in it (made in the kernel). This code
// only carries JSON-RPC: from the app (postMessage) to the kernel (the widget's comm), and
// back. Everything is answered in the kernel, which keeps the trace.
//
// In JupyterLab and Notebook 7 the frame lives in a layer of the cell's output area, laid over
// its place in this view: clearing the output (or running the cell again) removes the view,
// but the frame outlives it long enough for the app to get `ui/resource-teardown` and answer
// it (TEARDOWN_WAIT_MS at most), as the spec asks. Elsewhere (VS Code) the frame is in the view.

const MAX_RESTORES = 3;
const MAX_HEIGHT = 2000;
const TEARDOWN_WAIT_MS = 3000;
const TEARDOWN = {
  jsonrpc: "2.0",
  id: "teardown-view",
  method: "ui/resource-teardown",
  params: { reason: "the view's output was cleared or its cell ran again" },
};
const hosted = new WeakSet(); // models whose app is on screen: one iframe per model

function theme() {
  const light = document.body?.dataset?.jpThemeLight;
  if (light === "false") return "dark";
  if (light === "true") return "light";
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function closedNote(model) {
  return `(the MCP App view was closed: ${model.get("closed_reason") || "torn down"})`;
}

function render({ model, el }) {
  if (model.get("closed_reason")) {
    el.textContent = closedNote(model); // torn down before this view was drawn: no app to start
    return;
  }
  if (hosted.has(model)) {
    el.textContent = "(this MCP App is shown in another view of this output)";
    return;
  }
  hosted.add(model);
  const box = document.createElement("div"); // the app's place in the view
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
  let area = null; // the output area whose layer holds the frame
  let layer = null;
  let leaving = null; // set while the app winds down after the view left

  function setHeight(px) {
    iframe.style.height = `${px}px`;
    if (layer) box.style.height = `${px}px`;
  }

  function place() {
    if (!layer || !box.isConnected) return;
    const a = area.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    layer.style.top = `${b.top - a.top - area.clientTop + area.scrollTop}px`;
    layer.style.left = `${b.left - a.left - area.clientLeft + area.scrollLeft}px`;
    layer.style.width = `${b.width}px`;
  }
  const placeWatch = new ResizeObserver(place);
  const outputsWatch = new MutationObserver(place);

  function mount(frame) {
    area = el.closest(".jp-OutputArea");
    if (!area) {
      box.replaceChildren(frame);
      return;
    }
    if (getComputedStyle(area).position === "static") area.style.position = "relative";
    layer = document.createElement("div");
    layer.className = "mcp-app-layer";
    layer.style.cssText = "position:absolute;top:0;left:0";
    layer.append(frame);
    area.append(layer);
    box.replaceChildren();
    setHeight(parseInt(iframe.style.height, 10) || model.get("height"));
    placeWatch.observe(box);
    placeWatch.observe(area);
    outputsWatch.observe(area, { childList: true });
    place();
  }

  let showing = 0; // the frame is placed once the view is on the page
  function whenShown(then) {
    if (el.isConnected) then();
    else showing = requestAnimationFrame(() => whenShown(then));
  }

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
      if (height > 0) setHeight(Math.min(Math.ceil(height), MAX_HEIGHT));
    }
    model.send({ kind: "rpc", message });
    if (leaving && message.id === TEARDOWN.id && !message.method) leaving(); // the app answered
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
      layer?.remove();
      box.style.height = "";
      box.textContent = closedNote(model);
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
      layer?.remove();
      box.style.height = "";
      box.textContent = "(the MCP App kept leaving its page, and was closed)";
      model.send({ kind: "closed" });
    });
    iframe.srcdoc = model.get("srcdoc");
    box.replaceChildren();
    whenShown(() => mount(iframe));
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
    cancelAnimationFrame(showing);
    themeWatch.disconnect();
    sizeWatch.disconnect();
    placeWatch.disconnect();
    outputsWatch.disconnect();
    hosted.delete(model);
    const stop = () => {
      window.removeEventListener("message", fromApp);
      model.off("msg:custom", fromKernel);
      layer?.remove();
    };
    if (!(layer?.isConnected && iframe.isConnected)) {
      stop(); // the page or the notebook closed: the frame went with it
      model.send({ kind: "closed" });
      return;
    }
    // The output was cleared or the cell runs again: the app winds down out of sight. The
    // request is posted from here (anywidget has already dropped this view's comm listener),
    // and goes to the kernel too, which keeps it, and the app's answer, in the trace.
    layer.style.display = "none";
    const wait = setTimeout(() => {
      stop();
      model.send({ kind: "closed", leaving: true }); // no answer in time
    }, TEARDOWN_WAIT_MS);
    leaving = () => {
      clearTimeout(wait);
      stop();
    };
    model.send({ kind: "teardown", message: TEARDOWN });
    iframe.contentWindow?.postMessage(TEARDOWN, "*");
  };
}

export default { render };
