"""OpenAI request parts -> ``StructuredSpec`` -> llguidance grammar text; model text -> tool calls.

In: a request's ``response_format``, ``tools``, ``tool_choice`` (and ``parallel_tool_calls``), as the
gateway parsed them from JSON. Out: a frozen, hashable ``StructuredSpec`` (the compile cache's key), or
``None`` when nothing constrains the output. Every malformed part raises ``ValueError`` whose message
starts with the field's path (``tools[1].function.parameters.properties.age.type: ...``), so the gateway
can answer 400 with it. Pure Python plus llguidance's tokenizer-free grammar check; no NumPy, no JAX;
any thread.

Output formats (what the grammar admits and ``parse_output`` reads back)::

    json_object / json_schema   one JSON value, nothing around it (no leading whitespace, at most
                                WHITESPACE_MAX whitespace characters between tokens)
    tool_choice={"type": "function", "function": {"name": F}}
                                {"name": "F", "arguments": {...F's parameters...}}
    tool_choice="required"      [{"name": ..., "arguments": {...}}, ...]      (one or more calls;
                                exactly one when parallel_tool_calls is false)
    tool_choice="auto"          either an answer: free text that never contains TOOL_CALL_MARKER
                                (or the response_format's JSON, when one is given),
                                or optional free text, then TOOL_CALL_MARKER, then the "required" array

Why a marker for "auto": the grammar has to know, at every byte, whether the model is answering or
calling. A marker that free text may not contain makes that unambiguous with no lookahead: the text
branch is the lexeme ``PREFIX`` = any text minus ``.*<tool_call>.*`` and the call branch is the single
lexeme ``PREFIX "<tool_call>"``, so llguidance's lexer runs both in one DFA and never has to backtrack
to split text from marker. ``<tool_call>`` is Hermes/Qwen's spelling, the one small chat models are
most likely to have seen; the model still has to be told about the tools and the marker in its prompt
(the chat template's job, not the grammar's).

Whitespace is bounded (WHITESPACE_MAX per gap) because unbounded JSON whitespace is the classic failure
of constrained decoding: a model that starts emitting newlines can keep going until max_tokens.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

TOOL_CALL_MARKER = "<tool_call>"
WHITESPACE_MAX = 20
_WHITESPACE = rf"[\x20\x0A\x0D\x09]{{0,{WHITESPACE_MAX}}}"
_JSON_OPTIONS = {"whitespace_pattern": _WHITESPACE}
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames")

Format = Literal["text", "json_object", "json_schema"]
# The OpenAI request parts a spec is made of (``StructuredSpec.from_openai``'s keywords, the wire form's keys)
PARTS = ("response_format", "tools", "tool_choice", "parallel_tool_calls")
ToolMode = Literal["auto", "required", "function"]


@dataclass(frozen=True)
class ToolFunction:
    """One ``tools[i].function``: the parameters schema as compact JSON text (key order kept: the
    grammar emits properties in the order the schema lists them)."""

    name: str
    parameters: str
    strict: bool = False


@dataclass(frozen=True)
class StructuredSpec:
    """What the output must look like; hashable, so it keys the compile cache.

    ``format``/``schema`` come from ``response_format`` (``schema`` is compact JSON text, ``None`` for
    ``json_object`` and ``text``); ``tool_mode``/``tools`` from ``tools`` + ``tool_choice`` (``tools`` is
    narrowed to the one named function for ``"function"``). ``strict`` is recorded, not acted on: the
    schema constrains decoding either way (OpenAI's ``strict: false`` is best effort; ours is exact).
    """

    format: Format = "text"
    schema: str | None = None
    schema_name: str | None = None
    strict: bool = False
    tool_mode: ToolMode | None = None
    tools: tuple[ToolFunction, ...] = ()
    parallel_tool_calls: bool = True

    def __post_init__(self) -> None:
        if self.format == "text" and self.tool_mode is None:
            raise ValueError("a StructuredSpec constrains something: a JSON format or a tool mode")
        if self.tool_mode is not None and not self.tools:
            raise ValueError("tool_mode needs at least one tool")

    # -- construction from a request --------------------------------------------------------

    @classmethod
    def from_openai(
        cls,
        response_format: dict | None = None,
        tools: list | None = None,
        tool_choice: str | dict | None = None,
        *,
        parallel_tool_calls: bool = True,
    ) -> StructuredSpec | None:
        """The spec for one chat-completions request, or ``None`` when the output is unconstrained
        (no response_format or ``{"type": "text"}``, and no tools or ``tool_choice="none"``).

        ``tools`` given without ``tool_choice`` means ``"auto"``, as in OpenAI's API.
        Raises ``ValueError`` naming the offending field.
        """
        fmt, schema, name, strict = _parse_response_format(response_format)
        functions = _parse_tools(tools)
        mode, functions = _parse_tool_choice(tool_choice, functions)
        if fmt == "text" and mode is None:
            return None
        if not isinstance(parallel_tool_calls, bool):
            raise ValueError("parallel_tool_calls: must be a boolean")
        return cls(
            format=fmt,
            schema=schema,
            schema_name=name,
            strict=strict,
            tool_mode=mode,
            tools=functions if mode is not None else (),
            parallel_tool_calls=parallel_tool_calls,
        )

    @classmethod
    def from_json(cls, text: str) -> StructuredSpec | None:
        """The spec of its wire form (``to_json``: a JSON object of the request parts named in ``PARTS``), or
        ``None`` when they constrain nothing. Raises ``ValueError`` naming the field (``structured`` when the
        text is not such an object)."""
        try:
            parts = json.loads(text)
        except (TypeError, ValueError):
            raise ValueError(f"structured: not JSON: {str(text)[:80]!r}") from None
        if not isinstance(parts, dict) or not set(parts) <= set(PARTS):
            raise ValueError(f"structured: a JSON object of {', '.join(PARTS)}")
        return cls.from_openai(**parts)

    def to_openai(self) -> dict[str, Any]:
        """The request parts this spec was made from, normalized: ``from_openai(**spec.to_openai()) == spec``
        (schemas keep their key order; ``tool_choice`` is explicit)."""
        parts: dict[str, Any] = {}
        if self.format == "json_object":
            parts["response_format"] = {"type": "json_object"}
        elif self.format == "json_schema":
            schema = {"name": self.schema_name, "schema": json.loads(self.schema or "{}"), "strict": self.strict}
            parts["response_format"] = {"type": "json_schema", "json_schema": schema}
        if self.tool_mode is not None:
            parts["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "parameters": json.loads(t.parameters), "strict": t.strict},
                }
                for t in self.tools
            ]
            function = {"type": "function", "function": {"name": self.tools[0].name}}
            parts["tool_choice"] = function if self.tool_mode == "function" else self.tool_mode
        parts["parallel_tool_calls"] = self.parallel_tool_calls
        return parts

    def to_json(self) -> str:
        """The wire form (``from_json`` reads it back): the runtime server's ``params.structured``."""
        return json.dumps(self.to_openai(), ensure_ascii=False, separators=(",", ":"))

    # -- the grammar ------------------------------------------------------------------------

    def grammar(self) -> str:
        """llguidance grammar text (its JSON form, from a JSON schema or from Lark)."""
        import llguidance as llg

        if self.tool_mode is None:
            return llg.LLMatcher.grammar_from_json_schema(self._answer_schema(), overrides=_JSON_OPTIONS)
        return llg.LLMatcher.grammar_from_lark(self._tool_lark())

    def _answer_schema(self) -> dict:
        if self.format == "json_schema":
            return closed(json.loads(self.schema))
        return {"type": "object"}  # json_object: any JSON object

    def _call_schema(self, fn: ToolFunction) -> dict:
        return {
            "type": "object",
            "properties": {"name": {"const": fn.name}, "arguments": closed(json.loads(fn.parameters))},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }

    def _calls_schema(self) -> dict:
        calls = [self._call_schema(fn) for fn in self.tools]
        array = {"type": "array", "items": calls[0] if len(calls) == 1 else {"anyOf": calls}, "minItems": 1}
        if not self.parallel_tool_calls:
            array["maxItems"] = 1
        return array

    def _tool_lark(self) -> str:
        def embed(schema: dict) -> str:
            return "%json " + json.dumps({**schema, "x-guidance": _JSON_OPTIONS})

        if self.tool_mode == "function":
            return f"start: {embed(self._call_schema(self.tools[0]))}\n"
        calls = f"calls: {embed(self._calls_schema())}\n"
        if self.tool_mode == "required":
            return "start: calls\n" + calls
        marker = json.dumps(TOOL_CALL_MARKER)
        if self.format != "text":  # auto + response_format: the answer is that JSON, or a call
            return f"start: answer | {marker} calls\nanswer: {embed(self._answer_schema())}\n" + calls
        escaped = re.escape(TOOL_CALL_MARKER).replace("/", "\\/")
        return (
            "start: TEXT | TOOL_START calls\n"
            f"PREFIX: /(?s:.*)/ & ~/(?s:.*{escaped}.*)/\n"
            "TEXT: PREFIX\n"  # an empty answer is an answer (EOS at once), as without tools
            f"TOOL_START: PREFIX {marker}\n" + calls
        )


# --- request parsing ---------------------------------------------------------------------------


def error_field(exc: ValueError) -> str | None:
    """The request part a spec error names (its message starts with the field's path, ``tools[1].function...:``):
    ``"tools"``; None where the message names no part of ``PARTS`` (the caller then names its own field)."""
    head = str(exc).split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
    return head if head in PARTS else None


def _parse_response_format(rf: Any) -> tuple[Format, str | None, str | None, bool]:
    if rf is None:
        return "text", None, None, False
    if not isinstance(rf, dict):
        raise ValueError("response_format: must be an object")
    kind = rf.get("type")
    if kind == "text":
        return "text", None, None, False
    if kind == "json_object":
        return "json_object", None, None, False
    if kind != "json_schema":
        raise ValueError(f"response_format.type: {kind!r} is not one of 'text', 'json_object', 'json_schema'")
    js = rf.get("json_schema")
    if not isinstance(js, dict):
        raise ValueError("response_format.json_schema: required, an object with 'name' and 'schema'")
    name = js.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError("response_format.json_schema.name: required, 1-64 of a-z, A-Z, 0-9, '_', '-'")
    strict = js.get("strict", False)
    if not isinstance(strict, bool | None):
        raise ValueError("response_format.json_schema.strict: must be a boolean")
    schema = js.get("schema", {"type": "object"})
    _check_schema(schema, "response_format.json_schema.schema", root=True)
    return "json_schema", _compact(schema), name, bool(strict)


def _parse_tools(tools: Any) -> tuple[ToolFunction, ...]:
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise ValueError("tools: must be an array")
    out: list[ToolFunction] = []
    for i, tool in enumerate(tools):
        field = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise ValueError(f"{field}: must be an object")
        if tool.get("type") != "function":
            raise ValueError(f"{field}.type: {tool.get('type')!r} is not supported (only 'function')")
        fn = tool.get("function")
        if not isinstance(fn, dict):
            raise ValueError(f"{field}.function: required, an object with 'name'")
        name = fn.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"{field}.function.name: required, 1-64 of a-z, A-Z, 0-9, '_', '-'")
        if any(t.name == name for t in out):
            raise ValueError(f"{field}.function.name: {name!r} is defined twice")
        params = fn.get("parameters", {"type": "object", "properties": {}})
        _check_schema(params, f"{field}.function.parameters", root=True)
        if params.get("type", "object") != "object":
            raise ValueError(f"{field}.function.parameters.type: must be 'object' (arguments are a JSON object)")
        strict = fn.get("strict", False)
        if not isinstance(strict, bool | None):
            raise ValueError(f"{field}.function.strict: must be a boolean")
        out.append(ToolFunction(name=name, parameters=_compact(params), strict=bool(strict)))
    return tuple(out)


def _parse_tool_choice(choice: Any, functions: tuple[ToolFunction, ...]) -> tuple[ToolMode | None, tuple]:
    if choice is None:
        return ("auto" if functions else None), functions
    if choice == "none":
        return None, ()
    if choice in ("auto", "required"):
        if not functions:
            if choice == "auto":
                return None, ()
            raise ValueError("tool_choice: 'required' needs a non-empty tools array")
        return choice, functions
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        if choice.get("type") != "function" or not isinstance(name, str):
            raise ValueError("tool_choice: an object must be {'type': 'function', 'function': {'name': ...}}")
        chosen = tuple(t for t in functions if t.name == name)
        if not chosen:
            known = ", ".join(t.name for t in functions) or "none"
            raise ValueError(f"tool_choice.function.name: {name!r} is not among tools (defined: {known})")
        return "function", chosen
    raise ValueError(f"tool_choice: {choice!r} is not 'none', 'auto', 'required' or a function object")


def closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object schema that lists ``properties``
    and says nothing about others (xgrammar's strict mode does the same). JSON Schema's default admits
    any extra key, and a small model given that freedom invents keys until max_tokens (measured: a
    LangChain tool schema without the keyword ran SmolLM2 to its token limit); a schema that wants extra
    keys says so."""
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed(v) if k in _NESTED else v for k, v in schema.items()}
    if "properties" in out:
        out["properties"] = {k: closed(v) for k, v in out["properties"].items()}
        out.setdefault("additionalProperties", False)
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), dict):
            out[key] = {k: closed(v) for k, v in out[key].items()}
    return out


_NESTED = ("items", "anyOf", "oneOf", "allOf", "not", "prefixItems", "additionalProperties")


def _compact(schema: dict) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _check_schema(schema: Any, field: str, *, root: bool = False) -> None:
    """Shape checks that name the exact sub-field, then llguidance's own compile check (unsupported
    keywords, bad $ref, bad regex) for the whole schema."""
    _walk_schema(schema, field)
    if root:
        import llguidance as llg

        grammar = llg.LLMatcher.grammar_from_json_schema(_compact(schema), overrides=_JSON_OPTIONS)
        error = llg.LLMatcher.validate_grammar(grammar)
        if error:
            raise ValueError(f"{field}: {error.splitlines()[0][:300]}")


def _walk_schema(schema: Any, field: str) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"{field}: a schema must be an object")
    kind = schema.get("type")
    for t in kind if isinstance(kind, list) else [kind] if kind is not None else []:
        if t not in _JSON_TYPES:
            raise ValueError(f"{field}.type: unknown type {t!r} (known: {', '.join(sorted(_JSON_TYPES))})")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        raise ValueError(f"{field}.enum: must be a non-empty array")
    if "required" in schema:
        req = schema["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            raise ValueError(f"{field}.required: must be an array of property names")
    for key in _SUBSCHEMA_MAPS:
        if key in schema:
            if not isinstance(schema[key], dict):
                raise ValueError(f"{field}.{key}: must be an object of schemas")
            for name, sub in schema[key].items():
                _walk_schema(sub, f"{field}.{key}.{name}")
    for key in _SUBSCHEMA_LISTS:
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                raise ValueError(f"{field}.{key}: must be a non-empty array of schemas")
            for i, sub in enumerate(schema[key]):
                _walk_schema(sub, f"{field}.{key}[{i}]")
    for key in _SUBSCHEMA_ONE:
        if key in schema:
            _walk_schema(schema[key], f"{field}.{key}")


# --- reading the output back ---------------------------------------------------------------------


def parse_output(text: str, spec: StructuredSpec) -> tuple[str | None, list[dict] | None]:
    """``(content, tool_calls)`` for a finished output under ``spec``, OpenAI-shaped.

    ``tool_calls`` is ``None`` for a plain answer; each call is
    ``{"id": "call_...", "type": "function", "function": {"name", "arguments": <JSON text>}}``.
    ``content`` is the text before the marker for an auto call (``None`` when empty), the whole text
    for an answer. Raises ``ValueError`` if a tool-call output does not parse (a truncated output:
    ``finish_reason="length"`` cut the JSON short).
    """
    if spec.tool_mode is None:
        return text, None
    if spec.tool_mode == "auto":
        head, sep, tail = text.partition(TOOL_CALL_MARKER)
        if not sep:
            return text, None
        calls, content = _loads(tail), head.strip() or None
    else:
        calls, content = _loads(text), None
    if spec.tool_mode == "function":
        calls = [calls]
    if not isinstance(calls, list) or not all(isinstance(c, dict) and "name" in c for c in calls):
        raise ValueError("tool-call output is not a list of {'name', 'arguments'} objects")
    return content, [_openai_call(c) for c in calls]


def parse_tool_calls(text: str, spec: StructuredSpec) -> list[dict] | None:
    """OpenAI ``tool_calls`` for the output, or ``None`` when it is a plain answer."""
    return parse_output(text, spec)[1]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"tool-call output is not complete JSON: {e}") from None


def _openai_call(call: dict) -> dict:
    arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
    return {
        "id": "call_" + secrets.token_hex(12),
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
    }
