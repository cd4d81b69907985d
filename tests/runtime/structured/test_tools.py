"""Tool-call grammars (required, named, auto) on the real tokenizers: random-logit decoding always
yields OpenAI-shaped tool_calls whose arguments validate; auto keeps plain text plain."""

from __future__ import annotations

import json

import pytest

from runtime.structured import TOOL_CALL_MARKER, StructuredSpec, parse_output, parse_tool_calls
from tests.runtime.structured.conftest import allowed_ids, greedy_random, mask_of
from tests.runtime.structured.schema_check import validate

SHORT = {"type": "string", "maxLength": 8}
PARAMS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": SHORT, "unit": {"enum": ["c", "f"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "add": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
}
TOOLS = [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in PARAMS.items()]


def consume(m, tok, text: str) -> None:
    for t in tok.encode(text, add_bos=False):
        assert m.accept(t), (text, t, m.error)


def check_calls(calls: list[dict], names: set[str]) -> None:
    assert calls, "no tool calls"
    for call in calls:
        assert call["type"] == "function" and call["id"].startswith("call_") and len(call["id"]) > 10
        assert call["function"]["name"] in names
        assert isinstance(call["function"]["arguments"], str)  # OpenAI's arguments are JSON text
        validate(json.loads(call["function"]["arguments"]), PARAMS[call["function"]["name"]])


def decode(compiler, tok, spec, *, seed: int, prefix: str = "", budget: int = 1500) -> str:
    m = compiler.compile(spec).matcher()
    consume(m, tok, prefix)
    ids, stopped = greedy_random(m, tok, seed=seed, budget=budget)
    text = prefix + tok.decode(ids)
    assert stopped, f"no stop within {budget} tokens: {text[:300]!r}"
    return text


@pytest.mark.parametrize("which", ["smol", "gemma"])
@pytest.mark.parametrize("seed", range(2))
def test_required(which, seed, request):
    compiler, tok = request.getfixturevalue(which), request.getfixturevalue(which + "_tok")
    spec = StructuredSpec.from_openai(None, TOOLS, "required")
    text = decode(compiler, tok, spec, seed=seed)
    assert isinstance(json.loads(text), list)
    check_calls(parse_tool_calls(text, spec), set(PARAMS))


def test_required_single_call_without_parallel(smol, smol_tok):
    spec = StructuredSpec.from_openai(None, TOOLS, "required", parallel_tool_calls=False)
    for seed in range(3):
        calls = parse_tool_calls(decode(smol, smol_tok, spec, seed=seed), spec)
        assert len(calls) == 1
        check_calls(calls, set(PARAMS))


@pytest.mark.parametrize("which", ["smol", "gemma"])
def test_named(which, request):
    compiler, tok = request.getfixturevalue(which), request.getfixturevalue(which + "_tok")
    spec = StructuredSpec.from_openai(None, TOOLS, {"type": "function", "function": {"name": "add"}})
    m = compiler.compile(spec).matcher()
    consume(m, tok, '{"name":"')
    got = {tok.token_bytes(int(i)) for i in allowed_ids(mask_of(m), m.vocab_size)}
    assert got and all(b"add".startswith(g[:3]) for g in got), sorted(got)[:10]  # the name is forced
    text = decode(compiler, tok, spec, seed=3)
    calls = parse_tool_calls(text, spec)
    assert [c["function"]["name"] for c in calls] == ["add"]
    check_calls(calls, {"add"})


@pytest.mark.parametrize("which", ["smol", "gemma"])
def test_auto_tool_call_after_text(which, request):
    compiler, tok = request.getfixturevalue(which), request.getfixturevalue(which + "_tok")
    spec = StructuredSpec.from_openai(None, TOOLS, "auto")
    text = decode(compiler, tok, spec, seed=4, prefix="Let me look that up. " + TOOL_CALL_MARKER)
    content, calls = parse_output(text, spec)
    assert content == "Let me look that up."
    check_calls(calls, set(PARAMS))
    bare = decode(compiler, tok, spec, seed=5, prefix=TOOL_CALL_MARKER)
    assert parse_output(bare, spec)[0] is None
    check_calls(parse_tool_calls(bare, spec), set(PARAMS))


def test_auto_marker_commits_to_a_call(smol, smol_tok):
    spec = StructuredSpec.from_openai(None, TOOLS, "auto")
    m = smol.compile(spec).matcher()
    first = allowed_ids(mask_of(m), m.vocab_size)
    assert len(first) > 40000  # free text: every non-special token
    assert set(smol_tok.stop_token_ids) <= set(first.tolist())  # an empty answer may end at once
    assert not set(first.tolist()) & (set(smol_tok.control_token_ids) - set(smol_tok.stop_token_ids))
    consume(m, smol_tok, "Sure" + TOOL_CALL_MARKER)
    after = {smol_tok.token_bytes(int(i)) for i in allowed_ids(mask_of(m), m.vocab_size)}
    assert after and all(a.startswith(b"[") for a in after)  # no more text: the call array opens
    assert not m.is_accepting()


def test_auto_plain_text_is_content(smol, smol_tok):
    spec = StructuredSpec.from_openai(None, TOOLS, "auto")
    m = smol.compile(spec).matcher()
    consume(m, smol_tok, "It is sunny in Paris. <tool is not a marker")
    assert m.is_accepting() and m.accept(min(smol_tok.stop_token_ids)) and m.is_terminated()
    assert parse_output("It is sunny.", spec) == ("It is sunny.", None)
    assert parse_tool_calls("It is sunny.", spec) is None


def test_auto_with_response_format(smol, smol_tok):
    spec = StructuredSpec.from_openai({"type": "json_object"}, TOOLS, "auto")
    m = smol.compile(spec).matcher()
    got = {smol_tok.token_bytes(int(i)) for i in allowed_ids(mask_of(m), m.vocab_size)}
    assert all(g[:1] in (b"{", b"<") for g in got)  # the JSON answer or the marker
    consume(m, smol_tok, '{"ok": true}')
    assert m.is_terminated()
    assert parse_tool_calls('{"ok": true}', spec) is None
    text = decode(smol, smol_tok, spec, seed=6, prefix=TOOL_CALL_MARKER)
    check_calls(parse_tool_calls(text, spec), set(PARAMS))


def test_truncated_call_raises(smol):
    spec = StructuredSpec.from_openai(None, TOOLS, "required")
    with pytest.raises(ValueError, match="not complete JSON"):
        parse_tool_calls('[{"name": "add", "argu', spec)


def test_json_formats_parse_as_content():
    spec = StructuredSpec.from_openai({"type": "json_object"})
    assert parse_output('{"a": 1}', spec) == ('{"a": 1}', None)
