"""StructuredSpec.from_openai: what each request shape becomes, and the ValueError (naming its field)
for each malformed one. No tokenizer needed."""

from __future__ import annotations

import json

import pytest

from runtime.structured import StructuredSpec
from runtime.structured.spec import error_field

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


def schema_format(schema: dict, name: str = "answer") -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def test_unconstrained_requests_give_none():
    assert StructuredSpec.from_openai(None, None, None) is None
    assert StructuredSpec.from_openai({"type": "text"}, None, None) is None
    assert StructuredSpec.from_openai(None, [WEATHER], "none") is None
    assert StructuredSpec.from_openai(None, [], "auto") is None  # auto with no tools: nothing to call


def test_formats_and_modes():
    obj = StructuredSpec.from_openai({"type": "json_object"})
    assert (obj.format, obj.schema, obj.tool_mode) == ("json_object", None, None)
    js = StructuredSpec.from_openai(schema_format({"type": "object", "properties": {"x": {"type": "integer"}}}))
    assert js.format == "json_schema" and js.strict and js.schema_name == "answer"
    assert json.loads(js.schema) == {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert StructuredSpec.from_openai(None, [WEATHER]).tool_mode == "auto"  # OpenAI's default with tools
    assert StructuredSpec.from_openai(None, [WEATHER, ADD], "required").tool_mode == "required"
    named = StructuredSpec.from_openai(None, [WEATHER, ADD], {"type": "function", "function": {"name": "add"}})
    assert named.tool_mode == "function" and [t.name for t in named.tools] == ["add"]


def test_specs_are_hashable_and_equal_by_value():
    a = StructuredSpec.from_openai(schema_format({"type": "object"}), [WEATHER], "required")
    b = StructuredSpec.from_openai(schema_format({"type": "object"}), [WEATHER], "required")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    c = StructuredSpec.from_openai(None, [WEATHER], "required", parallel_tool_calls=False)
    assert c != StructuredSpec.from_openai(None, [WEATHER], "required")


def test_schema_key_order_is_kept():
    """llguidance emits required properties in the schema's order; sorting keys would reorder them."""
    spec = StructuredSpec.from_openai(schema_format({"type": "object", "properties": {"z": {}, "a": {}}}))
    assert list(json.loads(spec.schema)["properties"]) == ["z", "a"]


@pytest.mark.parametrize(
    "parts",
    [
        {"response_format": {"type": "json_object"}},
        {"response_format": schema_format({"type": "object", "properties": {"z": {}, "a": {"type": "integer"}}})},
        {"tools": [WEATHER, ADD]},
        {"tools": [WEATHER, ADD], "tool_choice": "required", "parallel_tool_calls": False},
        {"tools": [WEATHER, ADD], "tool_choice": {"type": "function", "function": {"name": "add"}}},
        {"response_format": {"type": "json_object"}, "tools": [ADD], "tool_choice": "auto"},
    ],
    ids=["json_object", "json_schema", "auto", "required_single", "function", "auto_with_format"],
)
def test_the_wire_form_reads_back_the_same_spec(parts):
    """``to_json``/``from_json`` carry a spec to a runtime server: the spec comes back equal, key order kept."""
    spec = StructuredSpec.from_openai(**parts)
    assert StructuredSpec.from_openai(**spec.to_openai()) == spec
    back = StructuredSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert back == spec and back.schema == spec.schema


@pytest.mark.parametrize(
    "text,field",
    [("[1]", "structured"), ('{"colour": 1}', "structured"), ("{", "structured"), ('{"tools": 3}', "tools")],
)
def test_a_bad_wire_form_names_the_field(text, field):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        StructuredSpec.from_json(text)


def test_every_spec_builds_a_grammar():
    import llguidance as llg

    specs = [
        StructuredSpec.from_openai({"type": "json_object"}),
        StructuredSpec.from_openai(schema_format({"type": "object", "properties": {"x": {"type": "integer"}}})),
        StructuredSpec.from_openai(None, [WEATHER, ADD], "auto"),
        StructuredSpec.from_openai(None, [WEATHER, ADD], "required"),
        StructuredSpec.from_openai(None, [WEATHER], {"type": "function", "function": {"name": "get_weather"}}),
        StructuredSpec.from_openai({"type": "json_object"}, [ADD], "auto"),
    ]
    for spec in specs:
        assert llg.LLMatcher.validate_grammar(spec.grammar()) == "", spec


@pytest.mark.parametrize(
    "response_format, tools, tool_choice, field",
    [
        ("json", None, None, "response_format"),
        ({"type": "yaml"}, None, None, "response_format.type"),
        ({"type": "json_schema"}, None, None, "response_format.json_schema"),
        ({"type": "json_schema", "json_schema": {"schema": {}}}, None, None, "response_format.json_schema.name"),
        (
            schema_format({"type": "object", "properties": {"age": {"type": "int"}}}),
            None,
            None,
            "response_format.json_schema.schema.properties.age.type",
        ),
        (
            schema_format({"type": "object", "properties": {"r": {"enum": []}}}),
            None,
            None,
            "response_format.json_schema.schema.properties.r.enum",
        ),
        (schema_format({"type": "object", "required": "a"}), None, None, "response_format.json_schema.schema.required"),
        (
            schema_format({"type": "array", "items": {"anyOf": [{"type": "strng"}]}}),
            None,
            None,
            "response_format.json_schema.schema.items.anyOf[0].type",
        ),
        (schema_format({"type": "object", "if": {}}), None, None, "response_format.json_schema.schema"),
        (schema_format({"$ref": "#/$defs/missing"}), None, None, "response_format.json_schema.schema"),
        (schema_format({"type": "string", "pattern": "(["}), None, None, "response_format.json_schema.schema"),
        (None, {"type": "function"}, None, "tools"),
        (None, [{"type": "retrieval"}], None, "tools[0].type"),
        (None, [WEATHER, {"type": "function", "function": {"name": "bad name!"}}], None, "tools[1].function.name"),
        (None, [WEATHER, WEATHER], None, "tools[1].function.name"),
        (
            None,
            [{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}],
            None,
            "tools[0].function.parameters.type",
        ),
        (
            None,
            [
                {
                    "type": "function",
                    "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}},
                }
            ],
            None,
            "tools[0].function.parameters.properties.x.type",
        ),
        (None, [WEATHER], "sometimes", "tool_choice"),
        (None, [WEATHER], {"type": "function", "function": {"name": "add"}}, "tool_choice.function.name"),
        (None, [WEATHER], {"type": "function"}, "tool_choice"),
        (None, None, "required", "tool_choice"),
    ],
)
def test_bad_requests_name_the_field(response_format, tools, tool_choice, field):
    with pytest.raises(ValueError) as info:
        StructuredSpec.from_openai(response_format, tools, tool_choice)
    assert str(info.value).startswith(field + ":"), str(info.value)
    # the request part a 400 names (gateway and runtime server alike): the path's first part
    assert error_field(info.value) == field.split(".")[0].split("[")[0]


def test_an_error_naming_no_request_part_has_no_field():
    assert error_field(ValueError("structured: not JSON: '{'")) is None
    assert error_field(ValueError("grammar: bad")) is None
    assert error_field(ValueError("tools[2].function.name: required")) == "tools"


def test_closed_schemas_admit_no_keys_they_do_not_list():
    from runtime.structured.spec import closed

    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "c": {"type": "array", "items": {"type": "object", "properties": {"d": {}}}},
        },
        "$defs": {"e": {"type": "object", "properties": {"f": {"type": "integer"}}}},
    }
    out = closed(schema)
    assert out["additionalProperties"] is False and out["properties"]["a"]["additionalProperties"] is False
    assert out["properties"]["c"]["items"]["additionalProperties"] is False
    assert out["$defs"]["e"]["additionalProperties"] is False
    assert closed({"type": "object", "properties": {}, "additionalProperties": True})["additionalProperties"] is True
    assert closed({"type": "object"}) == {"type": "object"}  # no properties listed: any object, as asked
    assert "additionalProperties" not in schema  # the caller's schema is not changed
