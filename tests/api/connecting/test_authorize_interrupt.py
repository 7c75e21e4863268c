"""Ctrl-C while an `authorize` callback waits (the user has the authorization page open and
has not come back): the connect ends at once with `Interrupted`, its connection closed, the
callback still waiting; it is not held until the callback returns. On a call that had to
authorize again, the call ends at once as any call does, and the flow is given up with it
(no request waits for it), so the next call asks afresh instead of waiting for the old one.

Against the demo server's OAuth mode; Ctrl-C is a SIGINT to the main thread, sent from the
callback as the user's key would be, as tests/api/connecting/test_device_grant.py does.
"""

from __future__ import annotations

import signal
import threading

import httpx2

import mcp_notebook
from mcp_notebook import Interrupted, OAuth, demo_server
from mcp_notebook.demo_server import OAuthSettings

WAIT = 20.0  # seconds the user takes at most, in this test, before giving the callback an answer


class SlowUser:
    """An `authorize` callback that is Ctrl-C'd while it waits for the user; the times listed in
    `prompt` (counting from 1) it authorizes at once, as a browser that is sent back would."""

    def __init__(self, *prompt: int) -> None:
        self.prompt = prompt
        self.asked = 0
        self.release = threading.Event()
        self.returned = threading.Event()

    def __call__(self, url: str) -> str:
        self.asked += 1
        if self.asked in self.prompt:
            with httpx2.Client(follow_redirects=False, timeout=WAIT) as client:
                return client.get(url).headers["location"]
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        self.release.wait(WAIT)
        self.returned.set()
        raise RuntimeError("the user never came back")


def test_ctrl_c_while_the_authorize_callback_waits_ends_the_connect_at_once() -> None:
    process, url = demo_server.start_http(oauth=OAuthSettings())
    user = SlowUser()
    with process:
        try:
            caught: BaseException | None = None
            try:
                mcp_notebook.connect(url, name="waiting", auth=OAuth(authorize=user, remember=False))
            except KeyboardInterrupt as exc:  # a bare one too: it must fail this test, not end the run
                caught = exc
            assert not user.returned.is_set()  # it ended while the callback still waited
            assert isinstance(caught, Interrupted) and "interrupted while connecting" in str(caught)
            assert "waiting" not in mcp_notebook.connections()
        finally:
            user.release.set()
        assert user.returned.wait(WAIT)


def test_ctrl_c_on_a_call_that_reauthorizes_gives_its_flow_up_and_the_next_call_asks_afresh() -> None:
    process, url = demo_server.start_http(oauth=OAuthSettings(token_calls=1, refreshes=0))
    user = SlowUser(1, 3)
    with process, mcp_notebook.connect(url, name="again", auth=OAuth(authorize=user, remember=False)) as conn:
        try:
            assert conn.call_tool("add", {"a": 1, "b": 2}).structured == {"sum": 3}
            caught: BaseException | None = None
            try:
                conn.call_tool("add", {"a": 1, "b": 2})  # the token is used up: authorize again, Ctrl-C'd
            except KeyboardInterrupt as exc:
                caught = exc
            assert isinstance(caught, Interrupted)
            assert conn.call_tool("add", {"a": 2, "b": 2}).structured == {"sum": 4}  # asked afresh
            assert user.asked == 3 and not user.returned.is_set()  # the second callback still waits
        finally:
            user.release.set()
        assert user.returned.wait(WAIT)
