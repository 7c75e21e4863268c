"""Fixtures of tests/jupyterhub: a hub on 127.0.0.1 for a test (tests/support/hub.py, its harness),
and Chromium (tests/support/browser.py, shared with tests/browser)."""

from support.browser import chromium as chromium
from support.hub import hub as hub
