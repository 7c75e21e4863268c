"""`base.stderr`: the line of a server's stderr that says what went wrong."""

from __future__ import annotations

from mcp_notebook.base.stderr import blames_the_probe, error_line, quoted

CHAINED = [
    "Traceback (most recent call last):",
    '  File "server.py", line 3, in load',
    "KeyError: 'port'",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "server.py", line 9, in <module>',
    "    raise ConfigError('no port configured')",
    "config.ConfigError: no port configured",
]


def test_the_line_that_matters():
    assert error_line(CHAINED) == "config.ConfigError: no port configured"  # the last traceback's
    assert error_line(["starting", "\x1b[31mfatal: cannot bind 127.0.0.1:80\x1b[0m", "bye"]) == "fatal: cannot bind 127.0.0.1:80"
    assert error_line(["starting", "serving on stdio"]) is None
    assert quoted(["starting", "serving on stdio"]) == "; its last stderr lines: starting | serving on stdio"


def test_the_probe_is_blamed_only_when_nothing_else_is():
    assert not blames_the_probe(CHAINED)
    assert blames_the_probe([])
    assert blames_the_probe(["Error: unknown method 'server/discover'"])
