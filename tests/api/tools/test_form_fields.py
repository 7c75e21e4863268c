"""The fields a tool's form shows and the arguments their values make (`api.tools.form_fields`),
as plain Python: no widgets, no server. The widget form over them is tested against real
peers in tests/notebook/test_tool_view.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_notebook.api.tools.arguments import parse_value
from mcp_notebook.api.tools.form_fields import FieldInput, ToolFields, field_input
from mcp_notebook.api.tools.validate import ToolArgumentError

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Paris", "Oslo"], "description": "Where"},
        "unit": {"enum": ["c", "f"], "enumNames": ["Celsius", "Fahrenheit"], "default": "f"},
        "mood": {"oneOf": [{"const": "up", "title": "Happy"}, {"const": "down"}]},
        "loud": {"type": "boolean"},
        "count": {"type": "integer"},
        "ratio": {"type": "number", "minimum": 0.5, "default": 2},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "default": ["c", "z"]},
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}},
                "required": ["name"],
            },
        },
        "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
        "note": {"type": ["string", "null"], "default": None},
        "mail": {"type": "string", "format": "email"},
        "not a schema": True,
    },
    "required": ["city", "entities", "where"],
}


def test_each_property_gets_the_input_that_fits_it():
    fields = ToolFields(SCHEMA).fields
    assert list(fields) == [name for name in SCHEMA["properties"] if name != "not a schema"]
    assert fields["city"].input == FieldInput("choice", None, (("Paris", "Paris"), ("Oslo", "Oslo")))
    assert (fields["city"].required, fields["city"].kind, fields["city"].description) == (True, '"Paris"|"Oslo"', "Where")
    assert fields["unit"].input == FieldInput("choice", "f", (("Celsius", "c"), ("Fahrenheit", "f")))
    assert fields["mood"].input.options == (("Happy", "up"), ("down", "down"))
    assert fields["loud"].input == FieldInput("checkbox", False)
    assert fields["count"].input == FieldInput("integer", 0)  # unbounded
    assert fields["ratio"].input == FieldInput("number", 2, minimum=0.5, maximum=2**53)  # one end bounded: both set
    assert fields["tags"].input == FieldInput("choices", ("c",), (("a", "a"), ("b", "b"), ("c", "c")))
    assert fields["mail"].input == FieldInput("text", "", placeholder="name@example.com")
    assert not any(field.required for name, field in fields.items() if name not in ("city", "entities", "where"))


def test_what_no_input_fits_is_json_text_a_required_one_starting_from_a_sample():
    fields = ToolFields(SCHEMA).fields
    entities, where, note = fields["entities"], fields["where"], fields["note"]
    assert entities.kind == "array of object"
    assert entities.input == FieldInput("json", '[{"name": "text"}]', placeholder="JSON: array of object")
    assert where.input == FieldInput("json", '{"lat": 1}', placeholder="JSON: object")
    assert note.input == FieldInput("json", "", placeholder="JSON: string|null")  # optional: empty


def test_a_bound_number_starts_inside_its_bounds():
    assert field_input({"type": "integer", "minimum": 3}) == FieldInput("integer", 3, minimum=3, maximum=2**53)
    assert field_input({"type": "number", "maximum": -1}) == FieldInput("number", -1, minimum=-(2**53), maximum=-1)


def test_a_schema_without_properties_has_no_fields():
    for schema in (None, "nonsense", {}, {"type": "object"}):
        assert ToolFields(schema).fields == {}
        assert ToolFields(schema).checked_arguments({}) == {}


def test_only_what_the_user_set_is_sent():
    tool = ToolFields(SCHEMA)
    untouched = tool.arguments({})
    assert untouched == {"city": None, "entities": [{"name": "text"}], "where": {"lat": 1}}  # required: always sent
    values = {
        "city": "Oslo",
        "unit": "c",
        "loud": True,
        "count": 0,  # as it started: not sent
        "ratio": 2.0,  # equal to its start: not sent
        "tags": ("a", "b"),
        "entities": '[{"name": "Bob", "observations": ["x"]}]',
        "note": "",  # empty optional text: not sent
        "mail": "a@b.c",
    }
    assert tool.checked_arguments(values) == {
        "city": "Oslo",
        "unit": "c",
        "loud": True,
        "tags": ["a", "b"],  # a multiple choice's tuple sent as a list
        "entities": [{"name": "Bob", "observations": ["x"]}],
        "where": {"lat": 1},
        "mail": "a@b.c",
    }


def test_text_is_parsed_by_the_schema_as_key_value_pairs_are():
    tool = ToolFields({"properties": {"n": {"type": "integer"}, "s": {"type": "string"}, "j": {"type": "object"}}})
    assert tool.arguments({"n": "42", "s": "42", "j": ' {"a": [1]} '}) == {"n": 42, "s": "42", "j": {"a": [1]}}


def test_what_the_form_started_with_is_what_it_says():
    tool = ToolFields({"properties": {"n": {"type": "integer"}}})
    assert tool.arguments({"n": 5}, started={"n": 5}) == {}
    assert tool.arguments({"n": 0}, started={"n": 5}) == {"n": 0}


def one_line(caught: pytest.ExceptionInfo[ToolArgumentError]) -> str:
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_required_argument_left_unset_is_one_line_naming_it():
    with pytest.raises(ToolArgumentError) as caught:
        ToolFields(SCHEMA).checked_arguments({})
    assert one_line(caught) == "'city' should be string, not null null"
    undeclared = {"properties": {"a": {"type": "string"}}, "required": ["a", "b"]}  # no field for b
    with pytest.raises(ToolArgumentError) as caught:
        ToolFields(undeclared).checked_arguments({"a": "x"})
    assert one_line(caught) == "missing required 'b'"


def test_bad_values_are_one_line_errors():
    tool = ToolFields(SCHEMA)
    with pytest.raises(ToolArgumentError) as caught:
        tool.arguments({"city": "Oslo", "entities": "[{"})  # not JSON
    assert (
        one_line(caught) == "'entities' is not JSON: Expecting property name enclosed in double quotes: line 1 column 3 (char 2)"
    )
    with pytest.raises(ToolArgumentError) as caught:
        tool.arguments({"city": "Oslo", "entities": "  "})  # blank, yet required
    assert one_line(caught) == "'entities' should be array (JSON), not '  '"
    with pytest.raises(ToolArgumentError) as caught:
        ToolFields({"properties": {"n": {"type": "integer"}}}).arguments({"n": "many"})
    assert one_line(caught) == "'n' should be integer (JSON), not 'many'"
    with pytest.raises(ToolArgumentError) as caught:
        tool.checked_arguments({"city": "Rome", "ratio": 0.1, "entities": "[{}]"})
    assert one_line(caught) == (
        "'city' should be one of \"Paris\", \"Oslo\"; 'ratio' should be >= 0.5; missing required 'entities'[0].name"
    )


def test_the_fields_need_no_widgets():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, mcp_notebook.api.tools.form_fields; print('ipywidgets' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"


def test_a_number_box_sends_a_whole_number_as_the_magic_sends_its_literal():
    tool = ToolFields({"properties": {"n": {"type": "number"}, "i": {"type": "integer"}}, "required": ["n", "i"]})
    sent = tool.arguments({"n": 2.0, "i": 40.0})
    assert sent == {"n": 2, "i": 40} and all(type(v) is int for v in sent.values())  # as `n=2 i=40` parse
    assert tool.arguments({"n": 2.5, "i": 1}) == {"n": 2.5, "i": 1}
    assert type(parse_value("2.0", {"type": "integer"})) is int and type(parse_value("2.0", {"type": "number"})) is float
