"""`%mcp auth --steps` as text (`magics.auth.format_steps`): each step's account wraps at word
boundaries under its column, so a notebook never breaks it mid-word."""

from __future__ import annotations

from mcp_notebook.notebook.magics.auth import format_steps

TEXT_WIDTH = 80  # the columns of a narrow notebook


def test_a_long_step_wraps_between_words_under_its_column():
    what = "the authorization server refused the refresh token (invalid_grant); authorizing afresh with scope demo:admin"
    text = format_steps("demo", [{"seconds": 0.25, "step": "refresh", "what": what}])
    lines = text.splitlines()[2:]
    assert len(lines) > 1 and all(len(line) <= TEXT_WIDTH for line in lines)
    column = lines[0].index("the authorization")
    assert all(line[:column].strip() == "" and line[column] != " " for line in lines[1:])  # under `what`
    assert " ".join(line[column:] for line in lines) == what  # whole words only
