"""Warnings that point at the caller's line, not at this package's.

The rule kept: a warning the package gives about what a user wrote names the user's file and
line, however deep in the package it was found (a blocking method and its awaitable twin reach
the same check through different frames), so the frames inside the package are skipped rather
than counted.
"""

from __future__ import annotations

import os
import sys
import warnings

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """`warnings.warn`, attributed to the first frame outside the package."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=(PACKAGE,))
        return
    frame, level = sys._getframe(1), 2  # level 2: our caller's frame, the first one inside the package
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
