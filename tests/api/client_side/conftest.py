"""Fixtures of tests/api/client_side: `kernel_cell`, a pretend Jupyter cell (tests/support/widgets.py, shared)."""

from support.widgets import kernel_cell as kernel_cell
