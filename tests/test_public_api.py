"""The package's public surface: the names of its one table (`mcp_notebook._PUBLIC`), sorted,
seen by type checkers, printed as `mcp_notebook.X`; and every third-party package the code
imports is one it declares."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import tomllib

import mcp_notebook

REPO = Path(__file__).resolve().parents[1]
PACKAGE_INIT = REPO / "mcp_notebook" / "__init__.py"
# The one table of public names, by defining module (`mcp_notebook/__init__.py`); read, not copied.
PUBLIC_BY_MODULE: dict[str, tuple[str, ...]] = mcp_notebook._PUBLIC
PUBLIC = [name for names in PUBLIC_BY_MODULE.values() for name in names]
# Exported names kept for the exceptions they were merged into (base/errors.py says why).
ALIASES = {"StreamBroken": "TransportError", "TransportClosed": "ConnectionClosed"}
# Imported only when a user asks for what needs them (Trace.to_dataframe, YAML arguments), or
# only inside a running Jupyter kernel, which is ipykernel with jupyter_client and pyzmq under it
# (the question forms' subshell routing), or only inside a Jupyter server, which loads the
# server extension (jupyter_server on tornado) and shares jupyter_core's runtime directory
# with its kernels (the OAuth hand-off; without jupyter_core there is none).
OPTIONAL = {"pandas", "distributed", "yaml", "ipykernel", "jupyter_client", "zmq", "jupyter_server", "tornado", "jupyter_core"}


def test_the_public_names_are_the_tables_each_once_and_sorted():
    assert len(PUBLIC) == len(set(PUBLIC)), "a name listed under two modules"
    assert mcp_notebook.__all__ == sorted(PUBLIC)
    assert dir(mcp_notebook) == sorted({*vars(mcp_notebook), *PUBLIC})
    for module, names in PUBLIC_BY_MODULE.items():
        assert list(names) == sorted(names), module
        defining = importlib.import_module(f"mcp_notebook.{module}")
        for name in names:
            assert getattr(mcp_notebook, name) is getattr(defining, name), name


def _type_checking_imports() -> list[tuple[str, str, str | None]]:
    """(module, name, as-name) of each import in `mcp_notebook/__init__.py`'s TYPE_CHECKING block."""
    tree = ast.parse(PACKAGE_INIT.read_text())
    (block,) = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    found = []
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1 and node.module, ast.unparse(node)
        found += [(node.module, alias.name, alias.asname) for alias in node.names]
    return found


def test_type_checkers_see_exactly_the_tables_names_re_exported():
    """The TYPE_CHECKING imports are the table again, for mypy and pyright, which read no table:
    each name from its module, as itself (the explicit re-export strict checkers want)."""
    imports = _type_checking_imports()
    expected = [(module, name) for module, names in PUBLIC_BY_MODULE.items() for name in names]
    wrong = [f"from .{module} import {name} as {asname}" for module, name, asname in imports if asname != name]
    assert not wrong, f"not re-exported as themselves: {wrong}"
    missing = [f"from .{module} import {name} as {name}" for module, name in expected if (module, name, name) not in imports]
    extra = [f"from .{module} import {name}" for module, name, _ in imports if (module, name) not in expected]
    assert not missing and not extra, f"TYPE_CHECKING imports differ from _PUBLIC: missing {missing}, not in the table {extra}"


def test_public_classes_print_as_members_of_the_package():
    for name in PUBLIC:
        value = getattr(mcp_notebook, name)
        if inspect.isclass(value):
            shown = ALIASES.get(name, name)
            assert value.__name__ == shown, name
            assert value.__module__ == "mcp_notebook", name
            assert repr(value) == f"<class 'mcp_notebook.{shown}'>"
    for alias, target in ALIASES.items():
        assert getattr(mcp_notebook, alias) is getattr(mcp_notebook, target) and target in PUBLIC, alias


def test_every_class_marked_public_is_exported():
    """`base.public.public` marks a class as the package's: it must be in `__all__`."""
    marked = set()
    for path in (REPO / "mcp_notebook").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(d) == "public" for d in node.decorator_list):
                marked.add(node.name)
    assert marked, "no class marked @public found"
    assert sorted(marked - set(PUBLIC)) == []


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


def _public_names(cls: type) -> list[str]:
    return [name for name in dir(cls) if not name.startswith("_")]


def test_connection_keeps_at_most_sixty_public_names():
    """`Connection` is a core plus the feature methods (issue #38: 94 names before); the
    awaitable twins are on `conn.aio`, the old spellings reachable only through `__getattr__`."""
    names = _public_names(mcp_notebook.Connection)
    assert len(names) <= 60, f"{len(names)} public names: {names}"
    assert not [name for name in names if name.startswith("a") and name[1:] in names], "an a-prefixed twin is back"
    assert "session" not in names and "aio" in names


def test_every_blocking_method_has_its_twin_on_aio_or_is_listed_as_blocking_only():
    """The twin rule: each public method of `Connection` is on `AsyncConnection` by the same name,
    with the same parameters and a coroutine function, or its docstring lists it as blocking-only;
    and the awaitable face has no name the blocking one lacks."""
    blocking, awaiting = mcp_notebook.Connection, mcp_notebook.AsyncConnection
    listed = awaiting.__doc__.split("Blocking-only", 1)[1]
    methods = [name for name in _public_names(blocking) if inspect.isfunction(getattr(blocking, name))]
    unlisted = []
    for name in methods:
        if name not in vars(awaiting):
            if f"`{name}`" not in listed:
                unlisted.append(name)
            continue
        face, twin = getattr(blocking, name), getattr(awaiting, name)
        assert inspect.iscoroutinefunction(twin), name
        parameters = [list(inspect.signature(f).parameters.values())[1:] for f in (face, twin)]
        assert parameters[0] == parameters[1], name
        assert twin.__doc__ and twin.__qualname__ == f"AsyncConnection.{name}", name
    assert not unlisted, f"no twin on conn.aio and not listed as blocking-only: {unlisted}"
    assert [name for name in _public_names(awaiting) if not hasattr(blocking, name)] == []


def test_connects_options_are_checked_by_name_at_call_sites(tmp_path):
    """connect()'s options are written once (ConnectOptions' fields) and still typed: mypy (strict)
    refuses a misspelt option or a wrong type at a call site, for connect and aconnect alike."""
    mypy_api = pytest.importorskip("mypy.api")
    caller = tmp_path / "caller.py"
    caller.write_text(
        "import mcp_notebook\n"
        "async def main() -> None:\n"
        "    mcp_notebook.connect(['server'], name='a', timeout=3, era='legacy')\n"
        "    await mcp_notebook.aconnect('http://127.0.0.1:9/mcp', probe_timeout=1.5)\n"
        "    mcp_notebook.connect(['server'], nmae='a')\n"
        "    await mcp_notebook.aconnect('http://127.0.0.1:9/mcp', timeout='3')\n"
    )
    out, _, status = mypy_api.run(["--strict", "--no-error-summary", "--python-version", "3.10", str(caller)])
    errors = [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
    assert status == 1 and len(errors) == 2, out
    assert 'Unexpected keyword argument "nmae" for "connect"' in errors[0]
    assert 'Argument "timeout" to "aconnect" has incompatible type "str"' in errors[1]
