"""How a subcommand shows what it made: displayed in a Jupyter kernel that draws widgets, printed
elsewhere (terminal IPython, a script).

The rule kept here: a subcommand asks `frontend()` once and either `display`s a rich object
(a widget, or `Html`: text/html with its text/plain, which a saved notebook keeps) or prints
text; it never imports IPython itself.
"""

from __future__ import annotations

from typing import Any


def display(obj: Any) -> None:
    from IPython.display import display as ipython_display

    ipython_display(obj)


def frontend() -> bool:
    """Whether widgets can be drawn here (a kernel with a widget front end)."""
    from ..widgets.pump import has_widget_frontend

    return has_widget_frontend()


class Html:
    """A static display: text/html for notebooks, text/plain for everything else."""

    def __init__(self, html: str, text: str) -> None:
        self._html, self._text = html, text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/html": self._html, "text/plain": self._text}
