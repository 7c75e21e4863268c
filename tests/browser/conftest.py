"""Fixtures of tests/browser: Chromium, and JupyterLab or Notebook 7 on 127.0.0.1 for a test
(defined in tests/support/browser.py, the harness; `chromium` is shared with tests/jupyterhub)."""

from support.browser import chromium as chromium
from support.browser import jupyter_lab as jupyter_lab
from support.browser import notebook7 as notebook7
