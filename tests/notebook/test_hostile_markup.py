"""Every HTML renderer in the package is fed markup a server controls, and nothing it shows
can run: result, listing, prompt and resource displays, errors, the question forms and
the progress bar, a tool's view and form, the health, trace and dashboard views, the live
log and subscription panels, the magics' static HTML, a batch's bar and summary, a load test's
live and final tables, and a tap's views (the server watched through the real relay).

The renderers are not listed here: they are found by reading the package's modules (any
function that is named like one, writes a tag, builds an HTML widget, escapes text or
calls another renderer), and the test fails if one of them never ran on hostile input.
Everything they return, and every HTML widget of the object they render, is parsed while
the test runs, on whichever thread renders it: no tag that runs script, no event-handler attribute, no
link or source that is not http(s) or an image or audio data URI.

The markup comes from a real server (tests/servers/hostile_server.py, on the official
SDK) wherever a server is where it comes from; a task list and a `javascript:` URL
prompt are built directly.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import ipywidgets as widgets
import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.servers import SERVERS_DIR
from support.waiting import wait_until
from support.widgets import in_background

import mcp_notebook
from mcp_notebook import TaskList
from mcp_notebook.api.client_side.answers import Question
from mcp_notebook.api.display.panels import subscriptions_snapshot
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.widgets import health as _health_widgets
from mcp_notebook.notebook.widgets import interaction as iw
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.notebook.widgets import snapshots as snapshot_registry
from mcp_notebook.notebook.widgets import trace as _trace_widget
from mcp_notebook.notebook.widgets.tool_form import ToolForm
from mcp_notebook.runtime import get_runtime

pytestmark = [pytest.mark.node]

PACKAGE = Path(mcp_notebook.__file__).parent
# Closes an attribute (either quote), opens an element with an event handler, and a script.
MARKUP = "'\"><img src=x onerror=alert(1)><script>alert(2)</script>"
SHOWN = "<img src=x onerror=alert(1)>"  # what a renderer must show as text (it survives clipping)
WAIT = 20.0  # a hang guard, not a timing claim

# ----- what runs: the parse of a piece of markup -----

RUNS_SCRIPT = {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "link", "form"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "background", "srcdoc", "data"}


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hazards: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in RUNS_SCRIPT:
            self.hazards.append(f"a <{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.hazards.append(f"an {name}= handler on <{tag}>")
            elif name in URL_ATTRIBUTES and not _safe_url(name, (value or "").strip().lower()):
                self.hazards.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _safe_url(attribute: str, url: str) -> bool:
    if attribute == "href":
        return url.startswith(("https://", "http://"))
    return attribute == "src" and re.fullmatch(r"data:(image|audio)/[\w.+-]+;base64,[a-z0-9+/=\s]*", url) is not None


def hazards(markup: str) -> list[str]:
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    return reader.hazards


def text_of(markup: str) -> str:
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    return "".join(reader.text)


# ----- which functions render: read from the package's source -----

RENDER_NAMES = {"_repr_html_", "_repr_mimebundle_", "html", "_html"}
PROGRAMS = {"mcp_notebook.tap"}  # the relay's `python -m` entry: it refuses to be imported (and renders nothing)
TAG = re.compile(r"<\s*/?[a-zA-Z][\w-]*[\s/>]")


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    return fn.body[1:] if ast.get_docstring(fn) is not None else fn.body


def _renders(fn: ast.FunctionDef) -> bool:
    """Named like a renderer, or writes a tag, builds an HTML widget, escapes or calls a renderer."""
    if fn.name == "__repr__":
        return False  # `<Connection 'x' ready>` is text
    if fn.name in RENDER_NAMES or fn.name.endswith("_html"):
        return True
    for node in (n for statement in _body(fn) for n in ast.walk(statement)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and TAG.search(node.value):
            return True
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("HTML", "esc") or called.endswith("_html"):
                return True
    return False


def _abstract(fn: ast.FunctionDef) -> bool:
    body = _body(fn)
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])


def _codes(cls: type) -> set[CodeType]:
    """The code of each method `cls` has, its own or inherited (as attribute lookup finds them)."""
    methods: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        methods |= vars(klass)
    return {fn.__code__ for fn in methods.values() if hasattr(fn, "__code__")}


def _modules() -> Iterator[tuple[Path, str]]:
    """Each module of the package that can be imported: its file and its name."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if ".".join(parts) not in PROGRAMS:
            yield path, ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def discover() -> tuple[dict[CodeType, str], set[CodeType], list[type]]:
    """(renderer code -> its name, abstract renderers, the concrete classes that render)."""
    renderers: dict[CodeType, str] = {}
    abstract: set[CodeType] = set()
    modules = []
    for path, name in _modules():
        module = importlib.import_module(name)
        modules.append(module)
        for top in ast.parse(path.read_text()).body:
            if isinstance(top, ast.FunctionDef):
                found = [(top.name, top, vars(module))]
            elif isinstance(top, ast.ClassDef):
                owner = vars(vars(module)[top.name])
                found = [(f"{top.name}.{f.name}", f, owner) for f in top.body if isinstance(f, ast.FunctionDef)]
            else:
                continue
            for name, node, namespace in found:
                if not _renders(node):
                    continue
                fn = namespace[node.name]
                code = (getattr(fn, "fget", None) or getattr(fn, "__func__", fn)).__code__  # properties, static methods
                if _abstract(node):
                    abstract.add(code)
                else:
                    renderers[code] = f"{module.__name__}.{name}"
    classes: dict[int, type] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__.startswith("mcp_notebook"):
                if _codes(value) & renderers.keys() and not _codes(value) & abstract:
                    classes[id(value)] = value
    return renderers, abstract, sorted(classes.values(), key=lambda c: c.__qualname__)


# ----- watching them run -----

# An MCP App's own document: the server's HTML, meant to run, in the iframe sandboxed with
# allow-scripts only (tests/browser/test_browser_apps.py shows it cannot reach the page).
SANDBOXED = {"mcp_notebook.api.results.app_meta.with_csp"}


def markup_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [value["text/html"]] if isinstance(value.get("text/html"), str) else []
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(part, str) for part in value):
        return [value[1]]  # a (text, html) snapshot: the text is text, shown raw on purpose
    return []


def html_widgets(root: Any) -> list[widgets.HTML]:
    """Every HTML widget `root` holds: itself, its attributes, their children, once each."""
    found: dict[int, widgets.HTML] = {}
    todo = [root, *(vars(root).values() if hasattr(root, "__dict__") and not isinstance(root, widgets.Widget) else [])]
    seen: set[int] = set()
    while todo:
        item = todo.pop()
        if not isinstance(item, widgets.Widget) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, widgets.HTML):
            found[id(item)] = item
        todo.extend(getattr(item, "children", ()))
    return list(found.values())


class Watch:
    """A profile hook: which renderers ran, on which classes, and all the markup they left."""

    def __init__(self, renderers: dict[CodeType, str]) -> None:
        self.renderers = renderers
        self.ran: set[CodeType] = set()
        self.classes: set[type] = set()
        self.markup: list[tuple[str, str]] = []  # (renderer, markup), appended from any thread

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "return" or frame.f_code not in self.renderers:
            return
        name = self.renderers[frame.f_code]
        self.ran.add(frame.f_code)
        if name in SANDBOXED:
            return
        me = frame.f_locals.get("self")
        if me is not None:
            self.classes.add(type(me))
        self.markup += [(name, m) for m in markup_in(arg)]
        self.markup += [(f"{name} (its widgets)", w.value) for w in html_widgets(me)] if me is not None else []

    def add(self, where: str, markup: str) -> None:
        self.markup.append((where, markup))


@contextmanager
def watching(watch: Watch) -> Iterator[Watch]:
    """The hook on this thread, on threads started from now on, and on the runtime's loop thread."""
    runtime = get_runtime()
    sys.setprofile(watch.hook)
    threading.setprofile(watch.hook)
    runtime.call_sync(sys.setprofile, watch.hook)
    try:
        yield watch
    finally:
        threading.setprofile(None)
        if runtime.running:  # (unloading the extension stops it)
            runtime.call_sync(sys.setprofile, None)
        sys.setprofile(None)


# ----- feeding them -----


def hostile_server(era: str, name: str, **options: Any) -> mcp_notebook.Connection:
    argv = [sys.executable, str(SERVERS_DIR / "hostile_server.py"), "--markup", MARKUP]
    return mcp_notebook.connect(argv, name=name, era=era, **options)


def results_and_listings(conn: mcp_notebook.Connection) -> dict[str, str]:
    """What the server listed and answered, displayed; a JSON-RPC error lands in the trace."""
    shown = {
        kind: listing._repr_mimebundle_()["text/html"]
        for kind, listing in [
            ("tools", conn.list_tools()),
            ("resources", conn.list_resources()),
            ("templates", conn.list_resource_templates()),
            ("prompts", conn.list_prompts()),
        ]
    }
    shown["tool result"] = conn.call_tool(MARKUP)._repr_mimebundle_()["text/html"]
    failed = conn.call_tool("fails")
    assert failed.is_error
    shown["tool error"] = failed._repr_mimebundle_()["text/html"]
    with pytest.raises(mcp_notebook.McpError):
        conn.call_tool("refuses")
    shown["resource"] = conn.read_resource(conn.list_resources()[0]["uri"])._repr_mimebundle_()["text/html"]
    shown["prompt"] = conn.get_prompt(MARKUP)._repr_mimebundle_()["text/html"]
    task = {"taskId": MARKUP, "status": "working", "statusMessage": MARKUP, "createdAt": MARKUP, "lastUpdatedAt": MARKUP}
    shown["tasks"] = TaskList([task])._repr_mimebundle_()["text/html"]
    conn.call_tool("shout")  # a log line, and a progress bar in the (kernel) cell
    view = conn.describe_tool(MARKUP)  # named, described and with an enum argument in the markup
    shown["tool view"] = view._repr_mimebundle_()["text/html"]
    form = ToolForm(conn, view.tool)
    form.fields["mode"].value = "plain"
    assert form.call() is not None
    shown["tool form"] = "".join(html.value for html in html_widgets(form.widget))
    return shown


def questions(conn: mcp_notebook.Connection, forms: list[Any]) -> dict[str, str]:
    """The server's form and URL elicitations and its sampling request, answered in their forms."""
    thread, box = in_background(conn.call_tool, "ask")
    wait_until(lambda: forms)
    form = forms[-1]
    assert not form.accept(), "the required field is empty"
    shown = {"form": form.header.value, "form status": form.status.value}  # the status names the field
    form.fields[MARKUP].value = "filled"
    form.accept_button.click()
    thread.join(WAIT)
    assert not thread.is_alive() and box["result"].text == "accept"

    thread, box = in_background(conn.call_tool, "open_link", {"url": "https://example.com/" + MARKUP})
    wait_until(lambda: len(forms) == 2)
    forms[-1].accept_button.click()
    thread.join(WAIT)
    assert not thread.is_alive() and box["result"].text == "accept"
    wait_until(lambda: forms[-1].question.completed.is_set(), "the server to report the URL elicitation done")
    shown["url prompt"] = forms[-1].header.value

    thread, box = in_background(conn.call_tool, "sample")
    wait_until(lambda: len(forms) == 3)
    forms[-1].reply.value = "a reply"
    forms[-1].send_button.click()
    thread.join(WAIT)
    assert not thread.is_alive() and box["result"].text == "a reply"
    shown["sampling"] = forms[-1].header.value

    scripted = Question("elicitation", {"mode": "url", "url": "javascript:alert(1)", "message": MARKUP, "elicitationId": "x"})
    shown["javascript url prompt"] = iw.UrlPrompt(scripted).header.value
    return shown


def views(conn: mcp_notebook.Connection, modern: mcp_notebook.Connection, panels: list[Any]) -> dict[str, str]:
    """Health (with stderr), trace (an error row open), dashboard, log and subscription panels."""
    uri = modern.list_resources()[0]["uri"]
    modern.subscribe(uri)
    modern.call_tool("touch", {"uri": uri})
    conn.ping()
    conn.ping()  # two round trips: the health view draws their sparkline and histogram
    health = _health_widgets.health_widget(conn, show_stderr=True)
    dashboard = _health_widgets.dashboard_widget(mcp_notebook.connections)
    logs = conn.logs.panel()
    subscriptions = modern.subscriptions.panel(read=True)
    trace = _trace_widget.TraceView(conn, live=False)  # driven here, not by the pump
    pictured = _trace_widget.TraceView(conn, live=False, show="diagram")
    panels += [health, dashboard, logs, subscriptions, trace.widget, pictured.widget]
    trace.rows.value = conn.trace.filter(kind="error")[0].seq
    trace.tick(time.monotonic())
    reading = _widgets.views_of(subscriptions)
    wait_until(lambda: uri in reading.reading and reading.reading[uri].reads >= 1, "the subscribed resource to be read")
    shown = {name: panel._repr_mimebundle_()["text/html"] for name, panel in [("health", health), ("logs", logs)]}
    shown |= {"dashboard": dashboard._repr_mimebundle_()["text/html"], "trace": trace.widget._repr_mimebundle_()["text/html"]}
    shown |= {"trace row": trace.detail.value, "subscriptions": subscriptions._repr_mimebundle_()["text/html"]}
    shown["subscriptions snapshot"] = subscriptions_snapshot(modern)[1]
    shown["health snapshot"] = conn.health._repr_html_()  # conn.health as a cell's value
    shown |= {"live diagram": pictured.table.value, "diagram": conn.diagram()._repr_html_() or ""}
    shown["health snapshot output"] = snapshot_registry.bundle(health)["text/html"]
    return shown


def apps(conn: mcp_notebook.Connection) -> dict[str, str]:
    """A tool's MCP App view: the result under it, and what the app said (ui/message, model
    context) shown in the cell; its own document goes only into the sandboxed frame."""
    view = conn.app("view")
    assert view.wait(WAIT) is not None
    bundle = view._repr_mimebundle_()
    said = {"type": "text", "text": MARKUP}
    view.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": {"role": "user", "content": said}})
    view.receive({"jsonrpc": "2.0", "id": 2, "method": "ui/update-model-context", "params": {"content": [said]}})
    panel = view.on_change.__self__  # type: ignore[attr-defined]
    from mcp_notebook.api.apps.methods import model_tools

    views_off = model_tools(conn.list_tools(), views=False)._repr_mimebundle_()["text/html"]  # as where Apps are off
    return {"app view": bundle["text/html"], "app records": panel.records.value, "tools, views off": views_off}


def doctor() -> dict[str, str]:
    """The connection doctor's checklist: the server's words in its steps, in the live widget as
    it was last drawn and in the diagnosis that replaces it."""
    drawn: list[str] = []

    class Handle:
        def update(self, obj: Any) -> None:
            drawn.append(obj._repr_mimebundle_()["text/html"])

    def display(obj: Any, display_id: bool = False) -> Handle:
        obj.observe(lambda change: drawn.append(change["new"]), "value")
        obj._repr_mimebundle_()  # its text/plain, the checklist so far: text, no markup of its own
        return Handle()

    argv = [sys.executable, str(SERVERS_DIR / "hostile_server.py"), "--markup", MARKUP]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("IPython.display.display", display)
        diagnosis = mcp_notebook.doctor(argv, era="legacy")
    assert diagnosis.ok, diagnosis.text()
    return {"doctor checklist": drawn[-2], "doctor diagnosis": drawn[-1], "doctor": diagnosis._repr_html_()}


def magics(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`%mcp trace` and `%mcp logs` as a notebook shows them: static HTML that is saved with it.
    Last: unloading the extension closes every connection and stops the runtime."""
    displayed: list[Any] = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", displayed.append)
    # The SDK server sent shout's log messages (logger and data of markup) without declaring
    # logging: `capability` violations, which quote the params.
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    try:
        shell.run_line_magic("mcp", "violations --conn hostile")
        shell.run_line_magic("mcp", "trace --conn hostile")
        shell.run_line_magic("mcp", "logs --conn hostile")
        shell.run_line_magic("mcp", "trace --conn hostile --diagram")
        shell.run_line_magic("mcp", "health --conn hostile --snapshot --stderr")
    finally:
        shell.run_line_magic("unload_ext", "mcp_notebook")
        InteractiveShell.clear_instance()
    names = ["violations", "trace", "logs", "trace --diagram", "health --snapshot"]
    return {f"%mcp {name}": shown._repr_mimebundle_()["text/html"] for name, shown in zip(names, displayed, strict=True)}


def compared(tmp: Path) -> dict[str, str]:
    """A cassette of a plain session asked again of the hostile server: the differences are its markup."""
    path = tmp / "plain.jsonl"
    plain = [sys.executable, str(SERVERS_DIR / "hostile_server.py"), "--markup", "plain"]
    with mcp_notebook.connect(plain, name="plain", era="legacy") as conn:
        conn.request("tools/list")
        conn.trace.to_jsonl(path)
    comparison = mcp_notebook.compare(path, [*plain[:-1], MARKUP])
    assert not comparison.ok
    return {"comparison": comparison._repr_html_()}


def configured(conn: mcp_notebook.Connection, tmp: Path, monkeypatch: pytest.MonkeyPatch, displayed: list[Any]) -> dict[str, str]:
    """A configuration file is text from anyone who can write to a project: its names, command and
    input descriptions in the servers listing, the consent and inputs forms; and the server's tool
    names and descriptions in the changed-tools warning and diff."""
    from mcp_notebook.api.connecting.server_listing import configured_servers
    from mcp_notebook.api.tools import pins as tool_pins
    from mcp_notebook.configs import pins
    from mcp_notebook.configs.consent import ConsentRequest
    from mcp_notebook.configs.discovery import discover as discover_configs
    from mcp_notebook.configs.interpolate import input_requests
    from mcp_notebook.notebook.magics.configs import DiffView
    from mcp_notebook.notebook.widgets import configs as config_widgets

    monkeypatch.setenv("HOME", str(tmp))
    monkeypatch.chdir(tmp)
    inputs = [{"type": "promptString", "id": "k", "description": MARKUP, "password": True}]
    servers = {MARKUP: {"command": MARKUP, "args": [MARKUP, "${input:k}"], "env": {MARKUP: "x"}}}
    (tmp / "mcp.json").write_text(json.dumps({"servers": servers, "inputs": inputs}))
    entry = discover_configs().named(MARKUP)
    consent = config_widgets.ConsentForm(ConsentRequest(entry, [MARKUP, MARKUP], MARKUP, [MARKUP]))
    consent.cancel_button.click()
    asked = config_widgets.InputsForm(input_requests(entry), entry)
    asked.ok_button.click()
    assert config_widgets.ask_consent(ConsentRequest(entry, [MARKUP], None, [])) is None  # no subshell here
    shown = {"servers": configured_servers()._repr_mimebundle_()["text/html"], "consent": consent.header.value}
    shown["inputs"] = "".join(w.value for w in html_widgets(asked.widget))
    key = tool_pins.key_of(conn)
    pins.pin(key, [{**tool, "description": "as first seen"} for tool in conn.list_tools()])
    tool_pins.check(conn)
    shown["tools warning"] = displayed[-1]._repr_mimebundle_()["text/html"]
    shown["tools diff"] = DiffView(conn.name, tool_pins.tool_changes(conn))._repr_mimebundle_()["text/html"]
    return shown


def authorization(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The authorization widget: the authorization server's address and redirect URI come from
    its metadata, and the notes of its steps from its answers. A wrong paste, a failed token
    step, and a wait that ends at once (no paste, no loopback) in the waiting cell."""
    from urllib.parse import quote

    from mcp_notebook.notebook.widgets import auth as auth_widget

    url = f"https://{MARKUP}/authorize?response_type=code&redirect_uri={quote(MARKUP)}"
    form = auth_widget.AuthorizationWidget(url, None, how="paste the URL the browser ends on")
    form.box.value = MARKUP  # not the redirect URI: refused, which names the URI expected
    form._paste()
    refused = form.status.value
    form.step("token", MARKUP, "failed")
    form.finish(MARKUP, failed=True)
    waited: list[Any] = []
    with monkeypatch.context() as patch, pytest.raises(mcp_notebook.AuthorizationError):
        patch.setattr(auth_widget.snapshot_display, "show", lambda panel, bundle, text: waited.append(panel))
        auth_widget.authorize_in_cell(url, None, limit=0)
    shown = {"authorization": form.html(), "authorization paste": refused, "authorization widget": form.header.value}
    return shown | {"authorization in the cell": waited[0].html()}


def device_authorization(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The device grant's widget: the user code and the verification page come from the
    authorization server, the notes of its steps from its answers; shown in the waiting cell."""
    from mcp_notebook.auth.device import DeviceCode
    from mcp_notebook.notebook.widgets import device as device_widget

    code = DeviceCode(MARKUP, f"https://{MARKUP}/device", f"https://{MARKUP}/device?c=1", 600.0, 5.0, "https://as", "dc")
    form = device_widget.DeviceCodeWidget(code, None)
    drawn = form.header.value + form.code_box.value + form.link.value
    form.step("token", MARKUP, "failed")
    form.finish(MARKUP, failed=True)
    waited: list[Any] = []
    with monkeypatch.context() as patch:
        patch.setattr(device_widget.snapshot_display, "show", lambda panel, bundle, text: waited.append(panel))
        device_widget.show_in_cell(code, None)
    return {"device code widget": drawn, "device code": form.html(), "device code in the cell": waited[0].code_box.value}


def many_and_tapped(conn: mcp_notebook.Connection, displayed: list[Any]) -> dict[str, str]:
    """A tool mapped over rows and a load test of the hostile server (its error text in the bar,
    the batch's summary and the load's live and final tables), and the server watched through a
    tap as our own client talks to it through the real relay (its command, name and stderr in the
    tap's live views, health and the entries to paste)."""
    from mcp_notebook.api.batch.progress import BatchStats
    from mcp_notebook.notebook.widgets import batch as batch_widgets
    from mcp_notebook.notebook.widgets import load as load_widgets
    from mcp_notebook.notebook.widgets.tap import TapView, tap_health_widget

    argv = [sys.executable, str(SERVERS_DIR / "hostile_server.py"), "--markup", MARKUP]
    mapped = conn.map("fails", [{}, {}])
    boxes = [widget for widget in displayed if isinstance(widget, batch_widgets.BatchBox)]
    assert boxes, "the batch showed its bar in the cell"
    boxes[-1]._bar.update(BatchStats(MARKUP, 2, 1, 1, 1, 0.5))  # as a tick draws it mid-batch (the tool's name in it)
    assert SHOWN in boxes[-1]._repr_mimebundle_()["text/plain"]
    shown = {"batch": mapped._repr_html_(), "batch bar": boxes[-1]._bar.text.value}
    report = mcp_notebook.load(argv, {"tool": "fails"}, sessions=1, calls=2, era="legacy")
    (panel,) = [widget for widget in displayed if isinstance(widget, load_widgets.LoadPanel)]
    shown |= {"load report": report._repr_html_(), "load live": _widgets.views_of(panel).html()}

    tap = mcp_notebook.tap("hostile-tap", command=argv)
    try:
        with mcp_notebook.connect(tap.command(argv), name="tapped", era="legacy") as tapped:
            tapped.call_tool("fails")
            wait_until(lambda: tapped.health.stderr_tail, "the tapped server's stderr line")
        tap.wait(lambda t: t.session is not None and t.health.state == "ended", timeout=WAIT)
        live = tap_health_widget(tap)
        view = _widgets.views_of(live)
        view.render()
        line = TapView(tap)  # the tap shown as a value: its state line, as the pump redraws it
        line.key()
        line.render()
        shown |= {"tap": tap._repr_html_(), "tap live": tap._repr_mimebundle_().get("text/html", ""), "tap line": line.html()}
        shown |= {"tap health": tap.health._repr_html_(), "tap health live": view.html()}
        shown["tap entry"] = tap.entry("claude-code")._repr_html_()
    finally:
        tap.close()
    return shown


def test_every_html_renderer_keeps_server_markup_inert(kernel_cell, panels, monkeypatch, tmp_path):
    displayed, forms = kernel_cell
    renderers, _, classes = discover()
    assert len(renderers) >= 30 and len(classes) >= 15, "the discovery found the package's renderers"
    watch = Watch(renderers)
    with watching(watch):
        with (
            hostile_server("legacy", "hostile", elicitation=True, sampling=True) as conn,
            hostile_server("modern", "hostile-modern") as modern,
        ):
            wait_until(lambda: conn.health.stderr_tail, "the server's stderr line")
            shown = results_and_listings(conn) | questions(conn, forms) | configured(conn, tmp_path, monkeypatch, displayed)
            shown |= views(conn, modern, panels) | apps(conn) | many_and_tapped(conn, displayed)
            shown |= (
                authorization(monkeypatch)
                | device_authorization(monkeypatch)
                | compared(tmp_path)
                | doctor()
                | magics(monkeypatch)
            )
            bars = [widget for widget in displayed if isinstance(widget, iw.ProgressBox)]  # shout's, as it ended
            assert bars and SHOWN in bars[-1]._repr_mimebundle_()["text/plain"], "the bar's text shows the server's message"
    for widget in displayed:  # what the cell showed (progress bar, forms), as it ended
        for html in html_widgets(widget):
            watch.add("displayed in the cell", html.value)

    found = [f"{where}: {hazard}" for where, markup in watch.markup for hazard in hazards(markup)]
    found += [f"{where}: {hazard}" for where, markup in shown.items() for hazard in hazards(markup)]
    assert not found, "server markup that would run:\n" + "\n".join(sorted(set(found)))
    unfed = sorted(name for code, name in renderers.items() if code not in watch.ran)
    assert not unfed, f"renderers never fed server text here: {unfed}"
    unshown = sorted(cls.__qualname__ for cls in classes if cls not in watch.classes)
    assert not unshown, f"classes that render but were never rendered here: {unshown}"
    blank = sorted(where for where, markup in shown.items() if SHOWN not in text_of(markup).replace("%20", " "))
    assert not blank, f"these never showed the server's text (as text), so they were not fed it: {blank}"
    assert any(SHOWN in text_of(html.value) for widget in displayed for html in html_widgets(widget))
