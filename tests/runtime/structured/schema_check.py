"""A small JSON-schema validator for the tests (``jsonschema`` is not installed): the keywords the test
schemas use (type, properties, required, additionalProperties, items, enum, const, anyOf, minItems,
maxItems), each checked exactly."""

from __future__ import annotations

from typing import Any

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value: Any, schema: dict, path: str = "$") -> None:
    """Raise AssertionError naming the path of the first violation."""
    if "anyOf" in schema:
        errors = []
        for sub in schema["anyOf"]:
            try:
                validate(value, sub, path)
                break
            except AssertionError as e:
                errors.append(str(e))
        else:
            raise AssertionError(f"{path}: matches no anyOf branch: {errors}")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        assert any(_TYPES[t](value) for t in types), f"{path}: {value!r} is not {types}"
    if "enum" in schema:
        assert value in schema["enum"], f"{path}: {value!r} not in {schema['enum']}"
    if "const" in schema:
        assert value == schema["const"], f"{path}: {value!r} != {schema['const']!r}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            assert key in value, f"{path}: missing required {key!r}"
        for key, item in value.items():
            if key in props:
                validate(item, props[key], f"{path}.{key}")
            else:
                assert schema.get("additionalProperties", True) is not False, f"{path}: extra property {key!r}"
    if isinstance(value, list):
        assert len(value) >= schema.get("minItems", 0), f"{path}: fewer than minItems"
        assert len(value) <= schema.get("maxItems", len(value)), f"{path}: more than maxItems"
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{path}[{i}]")
