"""YAML mappings -> frozen dataclasses, with errors that name the key that is wrong.

    build(Limits, {"max_messages": "ten"}, "limits")
    -> ConfigError("limits.max_messages: must be an integer, got 'ten'")

The field's annotation (a string under ``from __future__ import annotations``) decides the check:
``int``, ``float`` (ints accepted), ``bool``, ``str``, ``tuple[str, ...]`` (a list of strings in
YAML), any of them ``| None``. Other annotations are left to the dataclass's ``__post_init__``.
Unknown keys are errors: a typo must not silently fall back to a default.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


class ConfigError(ValueError):
    pass


def check(value: Any, annotation: str, where: str) -> Any:
    kinds = [k.strip() for k in annotation.split("|")]
    if "None" in kinds:
        if value is None:
            return None
        kinds.remove("None")
    kind = kinds[0] if len(kinds) == 1 else ""
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: must be an integer, got {value!r}")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: must be a number, got {value!r}")
        return float(value)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: must be true or false, got {value!r}")
    elif kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be a string, got {value!r}")
    elif kind == "tuple[str, ...]":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: must be a list of strings, got {value!r}")
        return tuple(value)
    return value


def build(cls, data: Any, where: str, **extra):
    """``cls(**data, **extra)`` after checking keys and types; ``None`` gives the defaults."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: must be a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name not in extra}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(str, unknown))} "
                          f"(known: {', '.join(sorted(fields))})")
    kwargs = {}
    for key, value in data.items():
        annotation = fields[key].type if isinstance(fields[key].type, str) else getattr(fields[key].type, "__name__", "")
        kwargs[key] = check(value, annotation, f"{where}.{key}")
    try:
        return cls(**kwargs, **extra)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
