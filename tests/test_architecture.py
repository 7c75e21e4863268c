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
    "notebook": {"base", "protocol", "transports", "auth", "configs", "session", "runtime", "api"},
    "__main__": {"base", "transports", "auth", "api"},
    # The Jupyter server extension (the OAuth callback), loaded by Jupyter server, not by the
    # client: it shares only the hand-off's file protocol with the kernel.
    "server_extension": {"base", "auth"},
}
MAX_LINES = 400
# Logic kept apart from the IPython adapter beside it: it imports nothing of IPython, not even lazily.
IPYTHON_FREE = [
    "mcp_notebook.notebook.commands",
    "mcp_notebook.notebook.line_completion",
    "mcp_notebook.notebook.snapshot_registry",
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
    """A notebook module named as what it adapts to: magics (their completion too), widgets, IPython's display."""
    name = module.rsplit(".", 1)[-1]
    return name.startswith("magic") or "widget" in name or "display" in name


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
    assert is_front_end_adapter("mcp_notebook.notebook.tool_form_widget")
    assert is_front_end_adapter("mcp_notebook.notebook.magic_completion")
    assert not is_front_end_adapter("mcp_notebook.notebook.ipython_completion")
    assert not is_front_end_adapter("mcp_notebook.notebook.line_completion")


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


# The api layer's subpackages: none imports another that imports it back, and the core every
# feature stands on (`api.calls`) imports only what lies below it: the result objects (a
# listing is a `results.objects.Listing`). Features reach the core; the core reaches a feature
# only through what the feature hands it (a task follower, a retry hook, its own state object).
BELOW_THE_CORE = {"results"}
LEAVING_THE_API = {"doctor"}  # issue #38: the doctor becomes its own layer above `api`


def api_subpackage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 4 or parts[1] != "api" or parts[2] in LEAVING_THE_API:
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
