"""Makes a Python process see only what `pip install -e '.[lab]'` installs (for tests/notebooks).

Python imports this module at start-up when its folder is on PYTHONPATH. It walks the
requirements of `mcp-notebook[lab]` as the checkout's pyproject.toml states them (named by
MCP_NOTEBOOK_PYPROJECT; the installed metadata may be older), then the installed
distributions' metadata below them (every requirement whose marker holds, extras
followed), and puts a finder first on `sys.meta_path` that refuses the top-level modules
of every other installed distribution: the test extra's `mcp`, `fastmcp`, `pytest`,
`playwright` and what only they pull in. Child processes (the demo
server) inherit PYTHONPATH, so they are held to the same set. The standard library, and
modules of no installed distribution (the package itself from PYTHONPATH), stay importable.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata as metadata
import os
import sys
from typing import Any

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT, ROOT_EXTRAS = "mcp-notebook", ("lab",)


def _root_requirements() -> list[tuple[str, tuple[str, ...]]]:
    with open(os.environ["MCP_NOTEBOOK_PYPROJECT"], "rb") as file:
        project = tomllib.load(file)["project"]
    lines = [*project["dependencies"], *(line for extra in ROOT_EXTRAS for line in project["optional-dependencies"][extra])]
    requirements = [Requirement(line) for line in lines]
    return [(req.name, tuple(req.extras)) for req in requirements if req.marker is None or req.marker.evaluate()]


def lab_distributions() -> set[str]:
    """Canonical names of the distributions `mcp-notebook[lab]` needs, itself included."""
    seen: set[tuple[str, tuple[str, ...]]] = {(ROOT, ROOT_EXTRAS)}
    names: set[str] = {ROOT}
    todo = _root_requirements()
    while todo:
        name, extras = todo.pop()
        key = (canonicalize_name(name), tuple(sorted(extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        names.add(key[0])
        for line in dist.requires or []:
            req = Requirement(line)
            wanted = ("", *extras)
            if req.marker is not None and not any(req.marker.evaluate({"extra": extra}) for extra in wanted):
                continue
            todo.append((req.name, tuple(req.extras)))
    return names


class LabOnly(importlib.abc.MetaPathFinder):
    def __init__(self, blocked: set[str]) -> None:
        self.blocked = blocked

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        top = fullname.partition(".")[0]
        if top in self.blocked:
            raise ModuleNotFoundError(f"No module named {top!r} (not installed by `make lab`)", name=top)
        return None


def _install() -> None:
    allowed = lab_distributions()
    blocked = {
        module
        for module, dists in metadata.packages_distributions().items()
        if not any(canonicalize_name(dist) in allowed for dist in dists)
    }
    sys.meta_path.insert(0, LabOnly(blocked))


_install()
