"""Requests a caller waits on: the request core (`exchange`: one request from a thread or a
coroutine, in either era), deadlines and progress, what a connection keeps for its features
(`feature_state`), and the words for a Ctrl-C."""
