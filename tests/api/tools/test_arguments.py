"""A tool call's arguments (`api.tools.arguments`), with the official SDK's server: an argument
the schema does not declare is sent with an ExtraArgumentWarning that names the caller's line."""

from __future__ import annotations

import asyncio
import warnings

from support.servers import sdk_server_cmd

import mcp_notebook
from mcp_notebook import ExtraArgumentWarning


def test_the_extra_argument_warning_points_at_the_callers_line_blocking_and_awaited():
    with mcp_notebook.connect(sdk_server_cmd(), name="sdk", era="legacy") as conn:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = _line() + 1
            conn.call_tool("echo", text="hi", loud=True)

            async def awaited() -> int:
                at = _line() + 1
                await conn.aio.call_tool("echo", text="hi", loud=True)
                return at

            aline = asyncio.run(awaited())
        where = [(w.category, w.filename, w.lineno) for w in caught]
        assert where == [(ExtraArgumentWarning, __file__, line), (ExtraArgumentWarning, __file__, aline)], where


def _line() -> int:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno
