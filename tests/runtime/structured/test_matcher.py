"""Masks on the real tokenizers: hand-checked steps, stop tokens only when the grammar can end,
random-logit greedy decoding that always validates, rollback/replay, padding, the batch filler."""

from __future__ import annotations

import json

import jax.numpy as jnp
import numpy as np
import pytest

from runtime.structured import BatchFiller, GrammarCompiler, StructuredSpec, bitmask_words
from runtime.structured.bitmask import apply_bitmask
from tests.runtime.structured.conftest import allowed_ids, greedy_random, mask_of
from tests.runtime.structured.schema_check import validate

SHORT = {"type": "string", "maxLength": 8}  # random logits would otherwise write strings for thousands of tokens
NESTED = {
    "type": "object",
    "properties": {
        "name": SHORT,
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "role": {"enum": ["admin", "editor", "viewer"]},
        "active": {"type": "boolean"},
        "address": {
            "type": "object",
            "properties": {"city": SHORT, "zip": {"type": "integer"}},
            "required": ["city", "zip"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": SHORT, "maxItems": 3},
        "scores": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"subject": SHORT, "value": {"type": "integer"}},
                "required": ["subject", "value"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["name", "age", "role", "active", "address", "tags", "scores"],
    "additionalProperties": False,
}
POINT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def json_schema(schema: dict) -> StructuredSpec:
    return StructuredSpec.from_openai(
        {"type": "json_schema", "json_schema": {"name": "t", "schema": schema, "strict": True}}
    )


def texts(tok, ids) -> set[bytes]:
    return {tok.token_bytes(int(i)) for i in ids}


def consume(m, tok, text: str) -> None:
    for t in tok.encode(text, add_bos=False):
        assert m.accept(t), (text, t, m.error)


# --- hand-checked steps ---------------------------------------------------------------------


def test_json_object_first_step(smol, smol_tok):
    m = smol.compile(StructuredSpec.from_openai({"type": "json_object"})).matcher()
    ids = allowed_ids(mask_of(m), m.vocab_size)
    got = texts(smol_tok, ids)
    assert b"{" in got and b'{"' in got  # an object opens, alone or with its first key's quote
    assert all(b.startswith(b"{") for b in got), sorted(got)[:20]
    assert not {b"[", b'"', b" {", b"1"} & got  # not an array, a string, leading space or a number
    assert not set(smol_tok.stop_token_ids) & set(ids.tolist())  # an empty output is not an object


@pytest.mark.parametrize("which", ["smol", "gemma"])
def test_schema_steps_by_hand(which, request):
    compiler, tok = request.getfixturevalue(which), request.getfixturevalue(which + "_tok")
    stops = set(tok.stop_token_ids)
    m = compiler.compile(json_schema(POINT)).matcher()
    consume(m, tok, '{"a":')
    got = texts(tok, allowed_ids(mask_of(m), m.vocab_size))
    digits = {str(d).encode() for d in range(10)}
    assert digits <= got and b"-" in {g[:1] for g in got}  # an integer starts (or whitespace first)
    assert all(g[:1] in digits | {b"-", b" ", b"\n", b"\t", b"\r"} for g in got), sorted(got)[:20]
    consume(m, tok, "12")
    got = texts(tok, allowed_ids(mask_of(m), m.vocab_size))
    assert b"3" in got and b"," in got and b"}" not in got  # "b" is required: no closing yet
    consume(m, tok, ',"b":"')
    ids = allowed_ids(mask_of(m), m.vocab_size)
    assert {g[:1] for g in texts(tok, ids)} == {b"x", b"y"}  # the enum, nothing else
    consume(m, tok, 'y"')
    assert not stops & set(allowed_ids(mask_of(m), m.vocab_size).tolist()) and not m.is_accepting()
    consume(m, tok, "}")
    # complete, and nothing may follow (no trailing whitespace): the stop tokens are all that is left
    assert set(allowed_ids(mask_of(m), m.vocab_size).tolist()) == stops
    assert m.is_accepting() and m.is_terminated()
    assert m.accept(min(stops)) and m.is_terminated()


def test_wrong_token_is_refused_and_only_stops_remain(smol, smol_tok):
    m = smol.compile(json_schema(POINT)).matcher()
    assert not m.accept(smol_tok.encode("[", add_bos=False)[0])
    assert m.error and m.is_terminated()
    assert set(allowed_ids(mask_of(m), m.vocab_size).tolist()) == set(smol_tok.stop_token_ids)


def test_fill_bitmask_checks_the_row(smol):
    m = smol.compile(json_schema(POINT)).matcher()
    with pytest.raises(ValueError, match="int32"):
        m.fill_bitmask(np.zeros(m.words, dtype=np.uint32))
    with pytest.raises(ValueError, match=f"\\({m.words},\\)"):
        m.fill_bitmask(np.zeros(m.words + 1, dtype=np.int32))


# --- random-logit decoding ------------------------------------------------------------------


@pytest.mark.parametrize("which", ["smol", "gemma"])
@pytest.mark.parametrize("seed", range(3))
def test_random_logits_always_validate(which, seed, request):
    compiler, tok = request.getfixturevalue(which), request.getfixturevalue(which + "_tok")
    m = compiler.compile(json_schema(NESTED)).matcher()
    ids, stopped = greedy_random(m, tok, seed=seed, budget=1500)
    assert stopped, f"no stop within 1500 tokens: {tok.decode(ids)[:300]!r}"
    value = json.loads(tok.decode(ids))
    validate(value, NESTED)


def test_random_logits_through_the_jax_sampler_mask(smol, smol_tok):
    """The same walk, masking with apply_bitmask as the engine will: [S=2, V] with one free row."""
    m = smol.compile(json_schema(POINT)).matcher()
    rng = np.random.default_rng(7)
    bitmask = np.zeros((2, m.words), dtype=np.int32)
    enabled = jnp.array([False, True])
    out: list[int] = []
    for _ in range(300):
        m.fill_bitmask(bitmask[1])
        logits = jnp.asarray(rng.standard_normal((2, m.vocab_size)).astype(np.float32))
        token = int(jnp.argmax(apply_bitmask(logits, jnp.asarray(bitmask), enabled)[1]))
        assert m.accept(token)
        if token in smol_tok.stop_token_ids:
            break
        out.append(token)
    else:
        pytest.fail("no stop within 300 tokens")
    validate(json.loads(smol_tok.decode(out)), POINT)


# --- state: rollback, replay, padding, batches, cache ---------------------------------------


def test_rollback_and_replay_restore_the_mask(smol, smol_tok):
    compiled = smol.compile(json_schema(NESTED))
    m = compiled.matcher()
    consume(m, smol_tok, '{"name":"Ada","age":3')
    before = mask_of(m)
    consume(m, smol_tok, '6,"role":"ad')
    n = len(m.tokens) - len(smol_tok.encode('{"name":"Ada","age":3', add_bos=False))
    m.rollback(n)
    np.testing.assert_array_equal(mask_of(m), before)
    fresh = compiled.matcher()
    assert fresh.replay(m.tokens)
    np.testing.assert_array_equal(mask_of(fresh), before)
    with pytest.raises(ValueError, match="only"):
        m.rollback(len(m.tokens) + 1)


def test_model_vocab_larger_than_tokenizer_pads_with_disallowed(smol_tok):
    compiler = GrammarCompiler(smol_tok, vocab_size=smol_tok.vocab_size + 77)
    m = compiler.compile(
        StructuredSpec.from_openai(None, [{"type": "function", "function": {"name": "f"}}], "auto")
    ).matcher()
    assert m.words == bitmask_words(smol_tok.vocab_size + 77)
    ids = allowed_ids(mask_of(m), m.vocab_size)  # free text: nearly every id is allowed
    assert len(ids) > 40000 and ids.max() < smol_tok.vocab_size


def test_batch_filler_equals_one_by_one(smol, smol_tok):
    specs = [json_schema(POINT), json_schema(NESTED), StructuredSpec.from_openai({"type": "json_object"})]
    matchers = [smol.compile(s).matcher() for s in specs]
    consume(matchers[0], smol_tok, '{"a":1')
    consume(matchers[1], smol_tok, '{"name":"x')
    broken = smol.compile(json_schema(POINT)).matcher()
    broken.accept(smol_tok.encode("[", add_bos=False)[0])
    matchers.append(broken)
    bitmask = np.full((6, smol.words), -1, dtype=np.int32)
    BatchFiller(num_threads=2).fill([(m, row) for m, row in zip(matchers, (0, 2, 3, 5))], bitmask)
    for m, row in zip(matchers, (0, 2, 3, 5)):
        np.testing.assert_array_equal(bitmask[row], mask_of(m))
    assert (bitmask[[1, 4]] == -1).all()  # rows without a grammar are left alone


def test_compile_cache_is_lru_by_spec(smol_tok):
    compiler = GrammarCompiler(smol_tok, cache_size=2)
    a, b, c = json_schema(POINT), json_schema(NESTED), StructuredSpec.from_openai({"type": "json_object"})
    first = compiler.compile(a)
    assert compiler.compile(json_schema(POINT)) is first  # equal specs share one compile
    compiler.compile(b)
    compiler.compile(a)  # a is now the most recent
    compiler.compile(c)  # evicts b
    assert compiler.compile(a) is first and compiler.cache_info() == {"size": 2, "max": 2}


def test_compile_from_threads(smol_tok):
    from concurrent.futures import ThreadPoolExecutor

    compiler = GrammarCompiler(smol_tok)
    specs = [json_schema({**POINT, "description": f"v{i % 4}"}) for i in range(16)]
    with ThreadPoolExecutor(4) as pool:
        compiled = list(pool.map(compiler.compile, specs))
    assert compiler.cache_info()["size"] == 4
    assert all(compiler.compile(c.spec) is compiler.compile(c.spec) for c in compiled)
    for c in compiled:
        m = c.matcher()
        consume(m, smol_tok, '{"a":1,"b":"x"}')
        assert m.is_terminated()
