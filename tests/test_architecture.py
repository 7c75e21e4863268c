"""The package's layering, checked: imports only point down, and no module imports itself
back through others. Every import counts: module level, inside functions and under
`TYPE_CHECKING` alike, so no cycle can hide behind a lazy or type-only import.

The layers, bottom to top, are written down in `mcp_notebook/__init__.py`; this is the same
rule as data.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_notebook"

# layer -> the layers its modules may import (each may import itself)
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "protocol": {"base"},
    "transports": {"base", "protocol"},
    "demo_server": {"base", "protocol"},
    "cassette": {"base", "protocol", "demo_server"},  # a program too: plays saved sessions, on the demo server's framing
    "replay": {"cassette", "api"},  # `python -m mcp_notebook.replay`: the cassette server run, the api function imported
    "auth": {"base", "transports"},
    "session": {"base", "protocol", "transports"},
    "runtime": {"base"},
    "configs": {"base", "transports"},
    "api": {"base", "protocol", "transports", "auth", "configs", "session", "runtime", "demo_server", "cassette"},
    # the connection doctor, an application over the API: `mcp_notebook.doctor()`, `%mcp doctor`, the CLI's `doctor`
    "diagnosis": {"base", "protocol", "transports", "auth", "configs", "session", "runtime", "api"},
    # the tap (watching other clients' sessions, both sides checked), an application over the API;
    # `tap` is its relay's command (`python -m mcp_notebook.tap`), never imported
    "taps": {"base", "protocol", "transports", "configs", "session", "runtime", "api"},
    "tap": {"taps"},
    # many sessions at once: load tests of a server, in the kernel or on a Dask cluster
    "workloads": {"base", "protocol", "transports", "configs", "session", "runtime", "api", "cassette"},
    "notebook": {
        "base",
        "protocol",
        "transports",
        "auth",
        "configs",
        "session",
        "runtime",
        "api",
        "diagnosis",
        "taps",
        "workloads",
    },
    "__main__": {"base", "transports", "auth", "api", "diagnosis"},
    # The Jupyter server extension (the OAuth callback), loaded by Jupyter server, not by the
    # client: it shares only the hand-off's file protocol with the kernel.
    "server_extension": {"base", "auth"},
}
MAX_LINES = 400
# Logic kept apart from the IPython adapter beside it: it imports nothing of IPython, not even lazily.
IPYTHON_FREE = [
    "mcp_notebook.notebook.magics.commands",
    "mcp_notebook.notebook.completion.candidates",
    "mcp_notebook.notebook.widgets.snapshots",
]


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<package>"


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of the package that `module` imports, wherever the import stands."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "mcp_notebook"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "mcp_notebook":
                source = node.module or ""
            else:
                continue
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                found.add(candidate if candidate in known else source)
    found.discard(module)
    return {name for name in found if name in known and not _is_layer_package(name)}


def _is_layer_package(name: str) -> bool:
    """`mcp_notebook.api` and the like: docstring-only packages, not layers' modules."""
    path = modules().get(name)
    return path is not None and path.name == "__init__.py" and name.count(".") == 1 and layer(name) != "demo_server"


GRAPH = {name: imports(name, path, modules()) for name, path in modules().items()}


def test_every_module_belongs_to_a_layer():
    homeless = [m for m in GRAPH if m != "mcp_notebook" and layer(m) not in ALLOWED]
    assert not homeless, f"modules outside the layers: {homeless}"


def test_imports_only_point_down():
    upward = [
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module != "mcp_notebook"  # the package itself wires the layers together
        for target in targets
        if layer(target) != layer(module) and layer(target) not in ALLOWED[layer(module)]
    ]
    assert not upward, "imports that run up the layers:\n" + "\n".join(sorted(upward))


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of every absolute import in `path`, wherever the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


FRONT_ENDS = {"IPython", "ipywidgets", "ipykernel", "anywidget"}


def test_below_the_notebook_layer_nothing_imports_a_front_end():
    """The core (every layer but `notebook`, the front ends) is plain Python: IPython and the
    widget libraries are imported only by the notebook layer's adapters, lazily or not."""
    found = [
        f"{module}: {sorted(FRONT_ENDS & third_party_imports(path))}"
        for module, path in modules().items()
        if layer(module) != "notebook" and FRONT_ENDS & third_party_imports(path)
    ]
    assert not found, "front-end imports below the notebook layer:\n" + "\n".join(found)


def is_front_end_adapter(module: str) -> bool:
    """A notebook module placed as what it adapts to: the front end, the magics, the widgets, and
    completion's hook into IPython (`completion.ipython`); never `render/` nor completion's logic."""
    parts = module.split(".")[2:]
    return parts[:1] in (["frontend"], ["magics"], ["widgets"]) or parts == ["completion", "ipython"]


def test_in_the_notebook_layer_only_modules_named_as_adapters_import_a_front_end():
    """IPython and the widget libraries stay behind the adapters, whose names say so; the
    logic beside them (renderings, completion's candidates, the snapshot registry, ...) is
    plain Python a script or a test can use without a kernel."""
    notebook = {module: path for module, path in modules().items() if layer(module) == "notebook"}
    unnamed = [
        f"{module}: {sorted(FRONT_ENDS & third_party_imports(path))}"
        for module, path in notebook.items()
        if FRONT_ENDS & third_party_imports(path) and not is_front_end_adapter(module) and module != "mcp_notebook.notebook"
    ]
    assert not unnamed, "front-end imports in modules not named as adapters:\n" + "\n".join(unnamed)
    assert is_front_end_adapter("mcp_notebook.notebook.widgets.tool_form")
    assert is_front_end_adapter("mcp_notebook.notebook.completion.ipython")
    assert not is_front_end_adapter("mcp_notebook.notebook.render.trace")
    assert not is_front_end_adapter("mcp_notebook.notebook.completion.candidates")


@pytest.mark.parametrize("module", IPYTHON_FREE)
def test_the_logic_beside_an_ipython_adapter_imports_no_ipython(module):
    assert "IPython" not in third_party_imports(modules()[module]), f"{module} imports IPython"


def test_no_import_cycles():
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(GRAPH[node]):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target) :] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small_and_say_what_they_do(path):
    source = path.read_text()
    assert ast.get_docstring(ast.parse(source)), f"{path.name} has no module docstring"
    lines = source.count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines (at most {MAX_LINES})"


HTTP_CLIENT = {"httpx2", "httpcore2"}  # the HTTP client library and the connection layer under it
HTTP_CLIENT_LAYERS = {"transports", "auth"}


def test_only_transports_and_auth_import_the_http_client():
    """Everything else (the API, the doctor's probes, the command line) goes through the
    transports layer's functions, so what a request carries, where it goes and whom it trusts
    is decided in one place."""
    found = [
        f"{module}: {sorted(HTTP_CLIENT & third_party_imports(path))}"
        for module, path in modules().items()
        if layer(module) not in HTTP_CLIENT_LAYERS and HTTP_CLIENT & third_party_imports(path)
    ]
    assert not found, "HTTP client imports outside transports and auth:\n" + "\n".join(found)


def test_the_doctor_is_a_layer_above_the_api():
    """`diagnosis` (the connection doctor) stands on the API and the API never imports it: the
    front ends (notebook, command line) reach it, and a live view of it is one of theirs."""
    assert "api" in ALLOWED["diagnosis"] and "diagnosis" not in ALLOWED["api"]
    assert {"diagnosis"} <= ALLOWED["notebook"] & ALLOWED["__main__"]
    upward = [
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if layer(module) != "diagnosis" and layer(module) not in ("notebook", "__main__", "<package>")
        for target in targets
        if layer(target) == "diagnosis"
    ]
    assert not upward, "modules below the doctor that import it:\n" + "\n".join(upward)


GLOSSARY_ENTRY = r"`([A-Z]\w*(?:\.\w+)?)`,? \(?((?:session|api)/[\w/]+\.py)"


def test_the_session_glossary_names_classes_where_they_live():
    """The words for a request in flight (`mcp_notebook/session/__init__.py`) each name a class,
    or a class's method, in the module that holds it: a rename or a move must update them."""
    import re

    doc = ast.get_docstring(ast.parse((PACKAGE / "session" / "__init__.py").read_text())) or ""
    entries = re.findall(GLOSSARY_ENTRY, doc)
    assert len(entries) >= 8, f"the session glossary names {len(entries)} classes"
    wrong = []
    for name, path in entries:
        module = PACKAGE / path
        tree = ast.parse(module.read_text()) if module.is_file() else ast.Module(body=[], type_ignores=[])
        class_name, _, method = name.partition(".")
        found = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name]
        if not found or (method and not any(getattr(item, "name", None) == method for item in found[0].body)):
            wrong.append(f"`{name}` is not in {path}")
    assert not wrong, "the session glossary is out of date:\n" + "\n".join(wrong)


# notebook/: one concept per folder, top to bottom; a module imports only its own folder and those below it.
NOTEBOOK = PACKAGE / "notebook"
NOTEBOOK_FOLDERS = ["frontend", "completion", "magics", "widgets", "render"]  # completion reads the subcommand table
# The affixes the folders' names make redundant (`widgets/trace.py`, not `widgets/trace_widget.py`).
FOLDER_WORDS = {"completion": ("completion",), "magics": ("magic",), "widgets": ("widget", "view"), "render": ("render", "view")}


def notebook_folder(module: str) -> str:
    """`mcp_notebook.notebook.widgets.trace` -> "widgets"; the front end is a folder of one module."""
    return module.split(".")[2]


def repeats_its_folder(folder: str, name: str) -> bool:
    return any(word in name for word in FOLDER_WORDS.get(folder, ()))


def test_the_notebook_layer_is_one_folder_per_concept():
    loose = sorted(p.name for p in NOTEBOOK.glob("*.py") if p.name not in ("__init__.py", "frontend.py"))
    assert not loose, f"modules directly in notebook/ (put each in the folder of its concept): {loose}"
    folders = sorted(p.name for p in NOTEBOOK.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(NOTEBOOK_FOLDERS[1:]), f"notebook/'s folders are {folders}; declare a new one in NOTEBOOK_FOLDERS"
    affixed = sorted(
        str(path.relative_to(NOTEBOOK))
        for folder in NOTEBOOK_FOLDERS[1:]
        for path in (NOTEBOOK / folder).glob("*.py")
        if repeats_its_folder(folder, path.stem)
    )
    assert not affixed, f"module names that repeat their folder: {affixed}"
    assert repeats_its_folder("widgets", "trace_widget") and repeats_its_folder("magics", "magic_tool")
    assert not repeats_its_folder("widgets", "trace") and not repeats_its_folder("render", "svg")


def test_notebook_folders_import_only_down():
    notebook = [m for m in GRAPH if layer(m) == "notebook" and m != "mcp_notebook.notebook"]
    rank = {folder: NOTEBOOK_FOLDERS.index(folder) for folder in NOTEBOOK_FOLDERS}
    upward = sorted(
        f"{module} -> {target}"
        for module in notebook
        for target in GRAPH[module]
        if layer(target) == "notebook" and target != "mcp_notebook.notebook"
        if rank[notebook_folder(target)] < rank[notebook_folder(module)]
    )
    assert not upward, f"imports up the notebook's folders ({' -> '.join(NOTEBOOK_FOLDERS)}):\n" + "\n".join(upward)


# The api layer's subpackages: none imports another that imports it back, and the core every
# feature stands on (`api.calls`) imports only what lies below it: the result objects (a
# listing is a `results.objects.Listing`). Features reach the core; the core reaches a feature
# only through what the feature hands it (a task follower, a retry hook, its own state object).
BELOW_THE_CORE = {"results"}


def api_subpackage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 4 or parts[1] != "api":
        return None  # `api.connection` and the like are the top of the layer, no subpackage
    return parts[2]


def api_subpackage_imports() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for module, targets in GRAPH.items():
        source = api_subpackage(module)
        for target in targets:
            into = api_subpackage(target)
            if source is not None and into is not None and into != source:
                found.setdefault((source, into), []).append(f"{module} -> {target}")
    return found


def test_no_two_api_subpackages_import_each_other():
    edges = api_subpackage_imports()
    both_ways = [
        f"{a} <-> {b}:\n  " + "\n  ".join(sorted(edges[(a, b)] + edges[(b, a)]))
        for a, b in sorted(edges)
        if a < b and (b, a) in edges
    ]
    assert not both_ways, "api subpackages importing each other both ways:\n" + "\n".join(both_ways)


def test_the_api_core_imports_no_feature():
    edges = api_subpackage_imports()
    upward = [
        line for (source, into), lines in edges.items() if source == "calls" and into not in BELOW_THE_CORE for line in lines
    ]
    assert not upward, "api.calls (the core) importing a feature or a front end:\n" + "\n".join(sorted(upward))
    below = [line for (source, into), lines in edges.items() if source in BELOW_THE_CORE and into == "calls" for line in lines]
    assert not below, "what lies below api.calls importing it back:\n" + "\n".join(sorted(below))
