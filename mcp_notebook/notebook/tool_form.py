"""A form built from a tool's input schema that calls the tool (`%mcp tool NAME` in Jupyter).

One field per argument, made as the elicitation form makes them (`interaction_widgets.field_widget`:
dropdowns for enums, checkboxes, number boxes); arrays and objects that no such widget fits
are a JSON text box. "Call" checks the arguments against the schema (one red line if they
cannot be right), calls the tool and shows the result below the form; `.result` keeps it.

The rule kept here: only what the user set is sent. A required argument always is; an optional
one only when its field no longer holds what the form started with.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets

from ..api.connection import Connection
from ..api.results import ToolResult
from ..api.tool_view import kind_of, sample
from ..api.validate import ToolArgumentError, parse_value, problems
from ..base.errors import McpNotebookError
from ..base.text import esc
from .interaction_widgets import _options, field_widget


def _fits_a_widget(prop: dict[str, Any]) -> bool:
    """Whether `field_widget` has a real input for this property (else: a JSON text box)."""
    kind = prop.get("type")
    if kind == "array":
        return _options(prop.get("items") or {}) is not None
    return kind in ("string", "integer", "number", "boolean") or _options(prop) is not None


class ToolForm:
    """Fields for a tool's arguments and a Call button; `.widget` is what to display."""

    def __init__(self, conn: Connection, tool: dict[str, Any]) -> None:
        self.conn, self.name = conn, str(tool.get("name", ""))
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        self.schema: dict[str, Any] = schema or {}
        self.required = set(self.schema.get("required") or [])
        declared = self.schema.get("properties") or {}
        self.props: dict[str, dict[str, Any]] = {k: v for k, v in declared.items() if isinstance(v, dict)}
        self.json_fields = {name for name, prop in self.props.items() if not _fits_a_widget(prop)}
        self.fields: dict[str, widgets.Widget] = {name: self._field(name, prop) for name, prop in self.props.items()}
        self.initial = {name: field.value for name, field in self.fields.items()}
        self.result: ToolResult | None = None
        rows = [widgets.HBox([self._label(name, prop), self.fields[name]]) for name, prop in self.props.items()]
        self.call_button = widgets.Button(description=f"Call {self.name}"[:40], button_style="primary")
        self.call_button.on_click(lambda _: self.call())
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([*rows, widgets.HBox([self.call_button, self.status]), self.output])

    def _field(self, name: str, prop: dict[str, Any]) -> widgets.Widget:
        if name not in self.json_fields:
            return field_widget(prop)
        start = json.dumps(sample(prop)) if name in self.required else ""
        return widgets.Textarea(value=start, placeholder=f"JSON: {kind_of(prop)}", rows=2)

    def _label(self, name: str, prop: dict[str, Any]) -> widgets.HTML:
        mark = " <b style='color:#e03131'>*</b>" if name in self.required else ""
        kind = f" <span style='color:#868e96'>{esc(kind_of(prop))}</span>"
        note = prop.get("description")
        help_ = f"<div style='color:#868e96;font-size:0.85em'>{esc(note)}</div>" if note else ""
        return widgets.HTML(
            f"<div style='white-space:normal;line-height:1.3'><code>{esc(name)}</code>{mark}{kind}{help_}</div>",
            layout=widgets.Layout(width="18em", flex="0 0 18em"),
        )

    def arguments(self) -> dict[str, Any]:
        """The arguments the form holds now (text fields parsed by the schema, as `%mcp call` does)."""
        arguments: dict[str, Any] = {}
        for name, field in self.fields.items():
            value = field.value
            if name not in self.required and value == self.initial[name]:
                continue
            if isinstance(value, tuple):
                value = list(value)
            if isinstance(value, str):
                if value == "" and name not in self.required:
                    continue
                value = json.loads(value) if name in self.json_fields and value.strip() else parse_value(value, self.props[name])
            if value is None and name not in self.required:
                continue
            arguments[name] = value
        return arguments

    def call(self) -> ToolResult | None:
        """Check the arguments, call the tool, show the result below the form."""
        try:
            arguments = self.arguments()
        except (ValueError, ToolArgumentError) as exc:
            self.status.value = f"<span style='color:#e03131'>{esc(exc)}</span>"
            return None
        issues = problems(arguments, self.schema)
        if issues:
            self.status.value = f"<span style='color:#e03131'>{esc('; '.join(issues))}</span>"
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
