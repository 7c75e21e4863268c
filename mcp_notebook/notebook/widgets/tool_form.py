"""A form built from a tool's input schema that calls the tool (`%mcp tool NAME` in Jupyter).

Widgets only: the fields, their kinds and starting values come from `api.tools.form_fields.ToolFields`
(a dropdown for an enum, a checkbox, number boxes, as the elicitation form has; JSON text for
arrays and objects no such widget fits), and so do the arguments the fields' values make.
"Call" asks for those arguments (one red line if they cannot be right), calls the tool and
shows the result below the form; `.result` keeps it.

The rule kept here: no argument is worked out here. The form hands `ToolFields` what the
widgets hold now and held at first (only what the user set is sent), and escapes server text.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ...api.connection import Connection
from ...api.results.objects import ToolResult
from ...api.tools.form_fields import ToolField, ToolFields
from ...api.tools.validate import ToolArgumentError
from ...base.errors import McpNotebookError
from ...base.text import esc
from .interaction import input_widget


class ToolForm:
    """Fields for a tool's arguments and a Call button; `.widget` is what to display."""

    def __init__(self, conn: Connection, tool: dict[str, Any]) -> None:
        self.conn, self.name = conn, str(tool.get("name", ""))
        self.tool_fields = ToolFields(tool.get("inputSchema"))
        described = self.tool_fields.fields
        self.fields: dict[str, widgets.ValueWidget] = {name: input_widget(field.input) for name, field in described.items()}
        self.initial = {name: field.value for name, field in self.fields.items()}
        self.result: ToolResult | None = None
        rows = [widgets.HBox([_label(field), self.fields[name]]) for name, field in described.items()]
        self.call_button = widgets.Button(description=f"Call {self.name}"[:40], button_style="primary")
        self.call_button.on_click(lambda _: self.call())
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([*rows, widgets.HBox([self.call_button, self.status]), self.output])

    def values(self) -> dict[str, Any]:
        """What each field holds now, by argument name."""
        return {name: field.value for name, field in self.fields.items()}

    def arguments(self) -> dict[str, Any]:
        """The arguments the form holds now (text fields parsed by the schema, as `%mcp call` does)."""
        return self.tool_fields.arguments(self.values(), self.initial)

    def call(self) -> ToolResult | None:
        """Check the arguments, call the tool, show the result below the form."""
        try:
            arguments = self.tool_fields.checked_arguments(self.values(), self.initial)
        except ToolArgumentError as exc:
            self.status.value = f"<span style='color:#e03131'>{esc(exc)}</span>"
            return None
        self.status.value = "<i>calling…</i>"
        self.output.clear_output()
        try:
            with self.output:
                self.result = self.conn.call_tool(self.name, arguments)
                from IPython.display import display

                display(self.result)
        except McpNotebookError as exc:
            self.status.value = f"<span style='color:#e03131'>{esc(exc)}</span>"
            return None
        self.status.value = "<i>error result</i>" if self.result.is_error else "<i>done</i>"
        return self.result


def _label(field: ToolField) -> widgets.HTML:
    """The argument's name, a red star if required, its kind and its description."""
    mark = " <b style='color:#e03131'>*</b>" if field.required else ""
    kind = f" <span style='color:#868e96'>{esc(field.kind)}</span>"
    help_ = f"<div style='color:#868e96;font-size:0.85em'>{esc(field.description)}</div>" if field.description else ""
    return widgets.HTML(
        f"<div style='white-space:normal;line-height:1.3'><code>{esc(field.name)}</code>{mark}{kind}{help_}</div>",
        layout=widgets.Layout(width="18em", flex="0 0 18em"),
    )
