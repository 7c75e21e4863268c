"""The package's public surface: exactly these names, sorted, printed as `mcp_notebook.X`; and
every third-party package the code imports is one it declares."""

from __future__ import annotations

import ast
import inspect
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import tomllib

import mcp_notebook

REPO = Path(__file__).resolve().parents[1]
PUBLIC = [
    "AuthorizationError",
    "Comparison",
    "ConnectOptions",
    "Connection",
    "ConnectionClosed",
    "CrossAppAccess",
    "Diagnosis",
    "Diagram",
    "ExtraArgumentWarning",
    "HandshakeError",
    "Health",
    "Interrupted",
    "Listing",
    "LogRecord",
    "McpError",
    "McpNotebookError",
    "OAuth",
    "OutputSchemaError",
    "PromptResult",
    "ProtocolViolation",
    "RequestTimeout",
    "ResourceResult",
    "StreamBroken",
    "Subscription",
    "TaskCancelled",
    "TaskList",
    "ToolArgumentError",
    "ToolResult",
    "ToolView",
    "Trace",
    "TraceEntry",
    "TransportClosed",
    "TransportError",
    "UrlElicitationRequired",
    "UsageError",
    "Violation",
    "__version__",
    "accept_tools",
    "aconnect",
    "close_all",
    "compare",
    "configured_servers",
    "connect",
    "connect_all",
    "connections",
    "demo",
    "doctor",
    "get_connection",
    "load_trace",
    "replay",
    "tool_changes",
]
# Imported only when a user asks for what needs them (Trace.to_dataframe, YAML arguments), or
# only inside a running Jupyter kernel, which is ipykernel with jupyter_client and pyzmq under it
# (the question forms' subshell routing), or only inside a Jupyter server, which loads the
# server extension (jupyter_server on tornado) and shares jupyter_core's runtime directory
# with its kernels (the OAuth hand-off; without jupyter_core there is none).
OPTIONAL = {"pandas", "yaml", "ipykernel", "jupyter_client", "zmq", "jupyter_server", "tornado", "jupyter_core"}


def test_the_public_names_are_exactly_these_and_sorted():
    assert mcp_notebook.__all__ == PUBLIC
    assert PUBLIC == sorted(PUBLIC)
    for name in PUBLIC:
        assert hasattr(mcp_notebook, name), name


def test_public_classes_print_as_members_of_the_package():
    for name in PUBLIC:
        value = getattr(mcp_notebook, name)
        if inspect.isclass(value):
            assert value.__module__ == "mcp_notebook", name
            assert repr(value) == f"<class 'mcp_notebook.{name}'>"


def test_exceptions_users_catch_are_exported_and_share_one_base():
    for name in PUBLIC:
        value = getattr(mcp_notebook, name)
        if inspect.isclass(value) and issubclass(value, Exception):
            assert issubclass(value, mcp_notebook.McpNotebookError), name


def test_the_connect_signatures_are_the_options():
    """connect() and aconnect() take exactly ConnectOptions' fields, with its defaults."""
    fields = {name: getattr(mcp_notebook.ConnectOptions(), name) for name in mcp_notebook.ConnectOptions.__dataclass_fields__}
    for function in (mcp_notebook.connect, mcp_notebook.aconnect):
        params = inspect.signature(function).parameters
        assert list(params)[0] == "target"
        options = {name: p.default for name, p in params.items() if p.kind is p.KEYWORD_ONLY}
        assert options == fields, function.__name__


def _imported_top_levels() -> set[str]:
    found: set[str] = set()
    for path in (REPO / "mcp_notebook").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("mcp_notebook", "_thread")}


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = set()
    for requirement in project["dependencies"]:
        name = requirement.split(";")[0]
        for stop in "<>=!~[ ":
            name = name.split(stop)[0]
        names.add(name.strip().lower().replace("_", "-"))
    return names


def test_every_imported_third_party_package_is_declared():
    provided_by = packages_distributions()
    declared = _declared()
    missing = {}
    for module in sorted(_imported_top_levels() - OPTIONAL):
        distributions = {d.lower().replace("_", "-") for d in provided_by.get(module, [module])}
        if not distributions & declared:
            missing[module] = sorted(distributions)
    assert not missing, f"imported but not declared in pyproject dependencies: {missing}"
