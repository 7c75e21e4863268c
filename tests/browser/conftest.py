"""Fixtures of tests/browser: Chromium, and JupyterLab (for a test, or one per module started by
`make lab`'s command) or Notebook 7 on 127.0.0.1 (defined in tests/support/browser.py, the
harness; `chromium` is shared with tests/jupyterhub)."""

from support.browser import chromium as chromium
from support.browser import jupyter_lab as jupyter_lab
from support.browser import make_lab as make_lab
from support.browser import notebook7 as notebook7
