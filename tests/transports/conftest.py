"""Fixtures of tests/transports: `kernel`, a real IPython kernel for a test (tests/support/kernels.py,
shared with tests/kernel)."""

from support.kernels import kernel as kernel
