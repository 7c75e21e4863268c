"""A progress notification's numbers are the server's: an integer too large for a float
(JSON allows any), NaN and Infinity (Python's JSON reader takes them), true, text. Each is
recorded without an exception (which would lose the notification, and with it the reset of
the call's idle timeout) and drawn as a bar.

The notification is handed to the call as the session hands it (`Caller.on_progress`): no peer
we run sends these numbers, and the wire adds nothing to them.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcp_notebook.api.calls.progress import Caller
from mcp_notebook.base.timeouts import Deadline


@pytest.mark.parametrize(
    ("params", "progress", "total"),
    [
        pytest.param({"progress": 10**400, "total": 10**400}, math.inf, math.inf, id="10**400"),
        pytest.param({"progress": 3, "total": -(10**400)}, 3.0, -math.inf, id="-10**400"),
        ({"progress": math.nan, "total": math.nan}, 0.0, None),
        ({"progress": math.inf, "total": 5}, math.inf, 5.0),
        ({"progress": True, "total": "ten"}, 0.0, None),
        ({"progress": 2, "total": 4}, 2.0, 4.0),
    ],
)
def test_any_progress_numbers_are_recorded_and_drawn(params: dict[str, Any], progress: float, total: float | None) -> None:
    call = Caller("tools/call", Deadline(60.0), "token")
    call.deadline.touched -= 30.0  # half the idle timeout has passed: the notification must reset it
    call.on_progress({"progressToken": "token", **params})
    assert call.progress.progress == progress and call.progress.total == total
    assert call.progress.updates == 1 and call.deadline.remaining() > 59.0  # type: ignore[operator]
    fraction = call.progress.fraction()
    assert fraction is None or 0.0 <= fraction <= 1.0
    assert call.progress.line()
