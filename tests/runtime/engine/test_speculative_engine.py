"""Speculative decoding through the engine: drafts are extra query rows of the ragged step, every row is
sampled, and what is kept equals plain decoding token for token (greedy and seeded), on the tiny model and
on the real SmolLM2."""

from __future__ import annotations

import pytest

from runtime.api import EngineConfig, SamplingParams
from tests.support.engines import TINY_PROMPTS, tiny_engine

# Repetitive prompts, so the n-gram lookup finds matches and the tiny random model's loops get drafted.
PROMPTS = TINY_PROMPTS + ["a b c a b c a b c a b c a b", "one two three one two three one two"]


def test_config_is_checked():
    with pytest.raises(ValueError, match="speculative must be one of"):
        EngineConfig(speculative="medusa")
    with pytest.raises(ValueError, match="prompt_lookup_min"):
        EngineConfig(speculative="ngram", prompt_lookup_min=5, prompt_lookup_max=2)
    with pytest.raises(ValueError, match="num_speculative_tokens"):
        EngineConfig(speculative="ngram", num_speculative_tokens=0)


@pytest.mark.parametrize("k", [1, 3])
def test_tiny_greedy_and_seeded_outputs_equal_plain_decoding(tiny_path, k):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (20, 30, 25, 40, 30, 24)]
    params += [SamplingParams(max_tokens=24, temperature=0.9, seed=i, ignore_eos=True) for i in range(6)]
    prompts = PROMPTS + PROMPTS
    plain = tiny_engine(tiny_path)
    spec = tiny_engine(tiny_path, speculative="ngram", num_speculative_tokens=k, max_num_seqs=8)
    expected = plain.generate(prompts, params)
    got = spec.generate(prompts, params)
    for e, g in zip(expected, got):
        assert g.token_ids == e.token_ids and g.text == e.text
        assert g.completion_tokens == e.completion_tokens and g.finish_reason == e.finish_reason
    stats = spec.stats()
    assert stats.spec_draft_tokens > 0 and stats.spec_accepted_tokens > 0, stats
    assert spec.scheduler.kv_cache_manager.num_free_blocks == spec.num_blocks - 1
    # One request at a time: kept drafts mean fewer steps than tokens.
    spec1 = tiny_engine(tiny_path, speculative="ngram", num_speculative_tokens=k)
    one = SamplingParams(max_tokens=40, ignore_eos=True)
    steps = spec1.num_steps
    (out,) = spec1.generate([PROMPTS[4]], [one])
    (ref,) = plain.generate([PROMPTS[4]], [one])
    assert out.token_ids == ref.token_ids
    assert spec1.num_steps - steps < 40, "no draft was ever kept"


def test_a_stop_string_inside_kept_drafts_ends_the_answer_there(tiny_path):
    plain = tiny_engine(tiny_path)
    spec = tiny_engine(tiny_path, speculative="ngram", num_speculative_tokens=3)
    free = SamplingParams(max_tokens=40, ignore_eos=True)
    (full,) = plain.generate([PROMPTS[4]], [free])
    stop = full.text[len(full.text) // 2 :][:3]  # some text from the middle of the answer
    assert stop.strip(), f"the tiny model's answer has no printable middle: {full.text!r}"
    params = SamplingParams(max_tokens=40, ignore_eos=True, stop=(stop,))
    (a,) = plain.generate([PROMPTS[4]], [params])
    (b,) = spec.generate([PROMPTS[4]], [params])
    assert b.text == a.text and b.finish_reason == a.finish_reason == "stop"
    assert b.completion_tokens == a.completion_tokens


QUOTE = (
    "Rename the variable `total` to `amount` in this code and show the whole code:\n\n```python\n"
    "def add_tax(total, rate):\n    total = total * (1 + rate)\n    return round(total, 2)\n\n\n"
    "def report(total):\n    print('Amount due:', add_tax(total, 0.2))\n```"
)


@pytest.mark.slow
def test_smollm2_quoting_answer_equals_plain_greedy_with_fewer_steps(smollm2):
    """The real model on an answer that copies its prompt: token-identical to the plain generator
    (the session's float32 SmolLM2), most drafts kept, so fewer steps than tokens."""
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    engine = LLMEngine(
        EngineConfig(
            dtype="float32",
            attention_backend="xla",
            max_num_seqs=4,
            max_num_batched_tokens=16,
            max_model_len=512,
            kv_cache_bytes=32 << 20,
            speculative="ngram",
            num_speculative_tokens=3,
        ),
        loaded=load_gguf(resolve_gguf("smollm2-135m")),
    )
    messages = [{"role": "user", "content": QUOTE}]
    params = SamplingParams(max_tokens=64)
    (out,) = engine.generate([messages], [params])
    _, ref = smollm2.generate(smollm2.engine.encode(messages), params)
    assert out.token_ids[: len(ref.token_ids)] == ref.token_ids
    stats = engine.stats()
    assert stats.spec_accepted_tokens >= 0.5 * stats.spec_draft_tokens > 0, stats
    decode_steps = engine.num_steps - -(-len(engine.encode(messages)) // 16)
    assert decode_steps < 0.8 * out.completion_tokens, (decode_steps, out.completion_tokens)
