"""The callback handler, and the extension's set-up: the route, and the announcement in
the runtime directory that tells the server's kernels the callback exists.

Only an authenticated user of this server reaches the handler (anyone else is sent to log
in first, then back here); it hands the response over only to a flow waiting with the same
`state` in this user's runtime directory, once. Its two pages are fixed text: they
never show the code or anything the request brought.
"""

from __future__ import annotations

import atexit
import contextlib
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join

from ..auth.handoff import CALLBACK_PATH, announce, deliver

HEAD = "<!doctype html><meta charset=utf-8><title>mcp-notebook authorization</title>"
DONE = HEAD + "<p>Authorization is complete: you may close this tab and go back to the notebook.</p>"
NOT_WAITING = HEAD + (
    "<p>No notebook of yours is waiting for this authorization (it was answered already, it ended, or it was "
    "started elsewhere). Run the cell again to start a new one.</p>"
)


class CallbackHandler(JupyterHandler):
    """Receives the authorization server's redirect and hands it to the waiting kernel: as
    much as writing to a kernel, so only for a user allowed to (the Hub's scopes decide there)."""

    @tornado.web.authenticated
    def get(self) -> None:
        if not self.authorizer.is_authorized(self, self.current_user, "write", "kernels"):
            raise tornado.web.HTTPError(403)
        state = self.get_query_argument("state", "")
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        if deliver(state, self.request.query):
            self.finish(DONE)
            return
        self.set_status(400)
        self.finish(NOT_WAITING)


def load(serverapp: Any) -> None:
    web_app = serverapp.web_app
    base_url = web_app.settings["base_url"]
    web_app.add_handlers(".*$", [(url_path_join(base_url, CALLBACK_PATH), CallbackHandler)])
    announced = announce(serverapp.connection_url, base_url)
    if announced is not None:
        atexit.register(_forget, announced)
    serverapp.log.info("mcp-notebook: the OAuth callback is at %s", url_path_join(base_url, CALLBACK_PATH))


def _forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
