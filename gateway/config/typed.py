"""Validation on pydantic, with errors that name the key that is wrong: YAML -> frozen config dataclasses
here, and the wording of the API's 400s (``gateway.api.schemas``).

    validate(Limits, {"max_messages": "ten"}, "limits")
    -> ConfigError("limits.max_messages: must be an integer, got 'ten'")

Config classes are pydantic dataclasses with ``STRICT``: unknown keys are errors (a typo must not
silently fall back to a default) and nothing is coerced ('8' is not a port). Built in code they take
positional arguments like any dataclass; read from YAML (``validate``) they are validated as JSON, where
strict mode still reads a list as a tuple and an integer as a float. Ranges and rules across fields are
each class's ``_check`` (a ``model_validator``), whose messages start with the key they are about.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    WrapValidator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from runtime.api import ConfigError  # noqa: F401 (one meaning: a configuration names a bad key)

STRICT = ConfigDict(strict=True, extra="forbid")
# For a tuple field: a list is a tuple too (its items stay strict). Strict mode takes a JSON array, but
# what a before-validator hands on is Python, where it would take only a tuple.
LIST_OK = Strict(False)

NonEmptyStr = Annotated[str, Field(min_length=1)]


def hash_secret(secret: str) -> str:
    """sha256 hex of a key as the client sends it (``surrogateescape``: any header bytes hash): API keys in
    tiers.yaml, the admin key, and the ``Authorization`` header a request brings."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def _str_tuple(value: Any, handler) -> tuple[str, ...]:
    if isinstance(value, str):  # YAML's `fallback: small` means a list of one
        value = [value]
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError("str_list", "must be a list of strings") from None


StrTuple = Annotated[tuple[str, ...], LIST_OK, WrapValidator(_str_tuple)]


def key_error(key: str, message: str) -> PydanticCustomError:
    """An error about ``key`` of the mapping being validated, for the YAML keys that a before-validator
    consumes (``key_env``, ``engine.kv_cache_mb``): pydantic's location stops at the mapping, so the
    key travels in the error's context and ``location`` appends it."""
    return PydanticCustomError("config_key", "{message}", {"key": key, "message": message})


def _sha256_hex(value: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise ValueError("must be 64 lowercase hex digits (sha256 of the key)")
    return value


Sha256Hex = Annotated[str, AfterValidator(_sha256_hex)]  # a key as kept: only its sha256, never in clear


def hash_key_env(data: Any, info: ValidationInfo, *, owner: str | None = None) -> Any:
    """The before-validator of a mapping that holds an API key: ``key_sha256``, or ``key_env`` (YAML only)
    naming the environment variable that holds the key, which becomes its ``key_sha256``. A key written in
    clear (``key``) or given both ways is an error, and so is a key without ``owner`` (``name``: whose key
    it is) when the mapping needs one. What is not a mapping (a config built in code) passes through."""
    if not isinstance(data, Mapping):  # built in code, or not a mapping (pydantic says so)
        return data
    if "key" in data:
        raise key_error("key", "keys are not written in clear; give key_sha256 or key_env")
    if owner is not None and ("key_sha256" in data or "key_env" in data) and owner not in data:
        raise key_error(owner, "required, a non-empty string (whose key this is)")
    if "key_env" not in data:
        return data
    if "key_sha256" in data:
        raise PydanticCustomError("config", "give exactly one of key_sha256 or key_env")
    rest = {k: v for k, v in data.items() if k != "key_env"}
    return {**rest, "key_sha256": hash_secret(secret_from_env(info, data["key_env"]))}


def secret_from_env(info: ValidationInfo, name: Any) -> str:
    """The key in environment variable ``name`` (``key_env``): the validation's ``context={"env": ...}``
    (tests) or the process's environment."""
    env: Mapping[str, str] = (info.context or {}).get("env") or os.environ
    value = env.get(name) if isinstance(name, str) else None
    if not value:
        raise key_error("key_env", f"the environment variable {name!r} is not set")
    return value


# ---------------------------------------------------------------- error wording

_MAPPING_TYPES = frozenset({"dict_type", "model_type", "dataclass_type", "dataclass_exact_type", "mapping_type"})
_WORDS = {  # pydantic's error type -> what a person reads after the key
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "literal_error": "must be {expected}",
    "greater_than_equal": "must be >= {ge}",
    "greater_than": "must be > {gt}",
    "less_than_equal": "must be <= {le}",
    "less_than": "must be < {lt}",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
    "string_too_short": "must be at least {min_length} characters long",
}
_UNKNOWN_KEY = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
_ECHO = frozenset({*_WORDS, *_MAPPING_TYPES, "str_list"})  # a config error says what it got


def location(error: ErrorDetails, prefix: tuple = ()) -> str:
    """Where ``error`` is, as a person writes it: ``("tiers", 0, "fallback")`` -> ``tiers[0].fallback``."""
    loc = prefix + tuple(error["loc"])
    if error["type"] == "config_key":
        loc += (error["ctx"]["key"],)
    return _path(loc)


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe(error: ErrorDetails, *, mapping: str = "a mapping") -> str:
    """One pydantic error in words, without its location: ``must be an integer``."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "value_error":  # a validator's ValueError: its message is the whole story
        return str(ctx["error"])
    if kind in ("too_short", "string_too_short") and ctx.get("min_length") == 1:
        return "must be a non-empty " + ("string" if kind == "string_too_short" else "list")
    if kind in _MAPPING_TYPES:
        return f"must be {mapping}"
    template = _WORDS.get(kind)
    return template.format(**ctx) if template else error["msg"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:48] + f"...({len(text)} chars)"


def _known_keys(root: type, loc: tuple) -> list[str]:
    """The keys the mapping at ``loc`` takes: its dataclass's fields, plus the YAML-only keys its
    before-validator consumes (a class's ``yaml_keys``)."""
    t: Any = root
    for part in loc:
        t = _unwrap(t)
        if isinstance(part, int):
            args = get_args(t)
            t = args[0] if args else None
        elif dataclasses.is_dataclass(t):
            t = get_type_hints(t).get(part)
        else:
            return []
    t = _unwrap(t)
    if not (isinstance(t, type) and dataclasses.is_dataclass(t)):
        return []
    return sorted({f.name for f in dataclasses.fields(t) if f.init} | set(getattr(t, "yaml_keys", ())))


def _unwrap(t: Any) -> Any:
    """``X | None`` -> ``X``."""
    if get_origin(t) in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        return args[0] if len(args) == 1 else t
    return t


def config_error(exc: ValidationError, root: type, where: str = "") -> ConfigError:
    """Every error of ``exc``, one per key, ``; ``-separated; unknown keys are listed per mapping with the
    keys it knows. ``where``: the key the validated mapping sits under (``admin``)."""
    prefix = (where,) if where else ()
    lines: list[str] = []
    unknown: dict[tuple, list[str]] = {}
    for error in exc.errors(include_url=False):
        if error["type"] in _UNKNOWN_KEY:
            unknown.setdefault(tuple(error["loc"][:-1]), []).append(str(error["loc"][-1]))
            continue
        message = describe(error)
        if error["type"] in _ECHO:
            message += f", got {_short(error['input'])}"
        key = location(error, prefix)
        lines.append(f"{key}: {message}" if key else message)
    for parent, names in unknown.items():
        known = _known_keys(root, parent)
        hint = f" (known: {', '.join(known)})" if known else ""
        key = _path(prefix + parent)
        message = f"unknown key(s) {', '.join(sorted(names))}{hint}"
        lines.append(f"{key}: {message}" if key else message)
    return ConfigError("; ".join(lines))


def validate(cls: type, data: Any, where: str = "", *, context: Mapping[str, Any] | None = None):
    """``data`` (YAML: mappings, lists, scalars) -> a ``cls``, or a ``ConfigError`` naming each bad key."""
    try:
        text = json.dumps(data, default=str)  # YAML's dates and the like are read as their text
        return TypeAdapter(cls).validate_json(text, context=dict(context or {}))
    except ValidationError as exc:
        raise config_error(exc, cls, where) from None
