"""The tests' own layout, checked: shared helpers live in the package tests/support, fixtures in
each folder's conftest.py, and no test module imports another test module (nor a helper kept
beside the tests). Every import counts, at module level or inside a function. pytest's
`pythonpath` is just `tests`, so `from support.servers import sdk_server_cmd` is the one way in.

The peers' programs (tests/servers, tests/peers) and the scripts other programs run
(tests/conformance/client.py) are not test modules: they are started, not imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
NOT_TESTS = ("servers", "peers", "support")


def _tests_files() -> list[Path]:
    return [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]


def _test_modules() -> list[Path]:
    """The modules pytest imports: test_*.py and conftest.py, and the support package itself."""
    return [p for p in _tests_files() if p.name.startswith("test_") or p.name == "conftest.py" or p.parent.name == "support"]


def _helpers_beside_tests() -> set[str]:
    """Module names a test could reach only through a path entry of a test folder."""
    return {
        p.stem
        for p in _tests_files()
        if p.relative_to(TESTS).parts[0] not in NOT_TESTS or p.name.startswith("test_") or p.name == "conftest.py"
    }


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and _imports_by_name(node.func) and node.args:
            name = node.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.add(name.value.split(".")[0])  # pytest.importorskip("test_kernel") imports it too
    return found


def _imports_by_name(func: ast.expr) -> bool:
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return called in ("importorskip", "import_module", "__import__")


def test_no_test_module_imports_another_test_module():
    forbidden = _helpers_beside_tests()
    crossing = sorted(
        f"{path.relative_to(REPO)} imports {name}" for path in _test_modules() for name in _imported(path) & forbidden
    )
    assert not crossing, "import shared helpers from tests/support instead:\n" + "\n".join(crossing)


def test_the_checker_sees_a_test_module_import():
    forbidden = _helpers_beside_tests()
    assert {"conftest", "test_http", "test_kernel", "test_features"} <= forbidden
    tree = ast.parse('kernel = pytest.importorskip("test_kernel")')
    assert isinstance(tree.body[0], ast.Assign) and _imports_by_name(tree.body[0].value.func)  # type: ignore[attr-defined]
    assert "support" not in forbidden and "sdk_server" not in forbidden


def test_pythonpath_is_just_the_tests_folder():
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["pythonpath"] == ["tests"]


def test_support_is_a_package_with_no_tests():
    support = TESTS / "support"
    assert (support / "__init__.py").is_file()
    assert not [p.name for p in support.glob("test_*.py")]


# A module that starts a Node peer: server-everything (its commands, or the root conftest's
# `conn`, `url` and tests/notebook's `ev` fixtures), the ext-apps servers, anything under tests/peers.
NODE_USE = re.compile(
    r"server_everything_cmd|node_executable|ext_apps|PEERS_DIR|\beverything\(|def test_\w+\([^)]*\b(conn|url|http_conn|ev)\b"
)


def test_a_module_that_starts_a_node_peer_is_marked_node():
    """`make test-fast` deselects the marker `node`: a module that needs Node and lacks it would
    fail there (or skip) instead of being left out."""
    unmarked = sorted(
        str(path.relative_to(REPO))
        for path in _test_modules()
        if path.name.startswith("test_") and NODE_USE.search(path.read_text()) and "pytest.mark.node" not in path.read_text()
    )
    assert not unmarked, "mark these `pytestmark = [pytest.mark.node]`:\n" + "\n".join(unmarked)


def test_each_folder_of_tests_api_names_a_subpackage_of_the_api():
    """tests/api mirrors mcp_notebook/api: a folder holds the tests of the subpackage it is named
    for; a module testing several features stays at tests/api."""
    api = REPO / "mcp_notebook" / "api"
    folders = [p for p in (TESTS / "api").iterdir() if p.is_dir() and p.name != "__pycache__"]
    strays = sorted(p.name for p in folders if not (api / p.name / "__init__.py").is_file())
    assert not strays, "tests/api folders that name no subpackage of mcp_notebook/api: " + ", ".join(strays)
    assert folders, "tests/api has no subfolders: move each module beside the subpackage it tests"


def test_test_module_names_are_unique() -> None:
    """pytest imports a test module by its basename (rootdir imports, no packages), so two
    `test_x.py` in different folders break collection of the whole run: a merge did it once."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted(p for p in _tests_files() if p.name.startswith("test_")):
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(TESTS)} and {path.relative_to(TESTS)}")
        seen.setdefault(path.name, path)
    assert not clashes, "test modules share a basename: " + "; ".join(clashes)
