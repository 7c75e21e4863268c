"""Fixtures of tests/kernel: `kernel`, a real IPython kernel for a test (tests/support/kernels.py,
shared with tests/transports)."""

from support.kernels import kernel as kernel
