"""Why a connection could not start, said so a user can act on it (`session/startup.py`)."""

from __future__ import annotations

import shutil
import sys

import pytest

import mcp_notebook

MISSING = "import mcp_notebook_not_installed_here"


def other_python() -> str:
    """A Python interpreter outside this venv's bin (the system's), as `make lab` once ran."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        found = shutil.which(candidate)
        if found and not found.startswith(sys.prefix):
            return found
    pytest.skip("no Python outside the venv on this machine")


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_server_whose_python_is_not_the_kernels_says_so_and_how_to_fix_it(era: str) -> None:
    """Its exit code and last words too, though our first write may meet the broken pipe first."""
    python = other_python()
    with pytest.raises(mcp_notebook.HandshakeError) as caught:
        mcp_notebook.connect([python, "-c", MISSING], name="other-python", timeout=30, era=era)
    message = str(caught.value)
    assert message.startswith("the server exited with code 1 during the handshake")
    assert "No module named 'mcp_notebook_not_installed_here'" in message
    assert f"the server's {python!r} is {python}, not this kernel's Python ({sys.executable})" in message
    assert "sys.executable" in message and "\n" not in message.split(" during the handshake")[0]


def test_the_kernels_own_python_missing_a_module_gets_no_interpreter_hint() -> None:
    with pytest.raises(mcp_notebook.HandshakeError) as caught:
        mcp_notebook.connect([sys.executable, "-c", MISSING], name="same-python", timeout=30)
    assert "No module named" in str(caught.value) and "not this kernel's Python" not in str(caught.value)
