"""Each sampling parameter changes SmolLM2's output the way it should, through the real engine (the step's
jitted sampler and its device-side state), including across preemption."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.api import EngineConfig, RequestError, SamplingParams
from runtime.engine.llm_engine import LLMEngine

LIST = [{"role": "user", "content": "List ten animals, one per line."}]
REPEAT = [{"role": "user", "content": "Write the word 'cat' twenty times."}]


SAY_HI = [{"role": "user", "content": "Say hi."}]
GIRAFFE = " giraffe"


def cases(engine) -> dict[str, tuple[list, SamplingParams]]:
    """Every request the tests below look at, by name: run together in one continuous batch (greedy
    tokens do not depend on what shares the batch; sampled ones are compared only with themselves)."""
    giraffe = engine.tokenizer.encode(GIRAFFE)
    assert len(giraffe) == 1
    c = {
        "greedy": (LIST, {}),
        "logprobs": (LIST, {"max_tokens": 6, "logprobs": 5}),
        "logprobs0": (LIST, {"max_tokens": 3, "logprobs": 0}),
        "giraffe": (LIST, {"max_tokens": 8, "logit_bias": {giraffe[0]: 100}}),
        "min_p1": (LIST, {"temperature": 1.5, "min_p": 1.0, "seed": 7}),
        "repeat": (REPEAT, {"max_tokens": 30, "ignore_eos": True}),
        "list30": (LIST, {"max_tokens": 30, "ignore_eos": True}),
        "sticky": (LIST, {"max_tokens": 30, "ignore_eos": True, "presence_penalty": -2.0}),
        "short": (SAY_HI, {"max_tokens": 60}),
        "held": (SAY_HI, {"max_tokens": 60, "min_tokens": 40}),
    }
    for seed in (1, 2, 3):
        c[f"top_k1_{seed}"] = (LIST, {"temperature": 1.0, "top_k": 1, "seed": seed})
        c[f"t1_{seed}"] = (LIST, {"temperature": 1.0, "seed": seed})
    for name in ("presence_penalty", "frequency_penalty", "repetition_penalty"):
        c[name] = (REPEAT, {"max_tokens": 30, "ignore_eos": True, name: 2.0})
    return {k: (p, SamplingParams(**{"max_tokens": 40, **kw})) for k, (p, kw) in c.items()}


@pytest.fixture(scope="module")
def engine():
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    config = EngineConfig(max_num_seqs=16, max_num_batched_tokens=256, max_model_len=512, kv_cache_bytes=48 << 20)
    return LLMEngine(config, loaded=load_gguf(resolve_gguf("smollm2-135m")))


@pytest.fixture(scope="module")
def out(engine):
    c = cases(engine)
    return dict(zip(c, engine.generate([p for p, _ in c.values()], [sp for _, sp in c.values()])))


def one(engine, prompt, **kw):
    (o,) = engine.generate([prompt], [SamplingParams(**{"max_tokens": 40, **kw})])
    return o


def repeats(ids) -> float:
    """The share of tokens that repeat an earlier one."""
    return 1 - len(set(ids)) / len(ids)


def test_top_k_one_at_temperature_one_is_greedy(out):
    greedy = out["greedy"].token_ids
    assert all(out[f"top_k1_{s}"].token_ids == greedy for s in (1, 2, 3))
    assert any(out[f"t1_{s}"].token_ids != greedy for s in (1, 2, 3))  # without top_k they differ


def test_min_p_one_keeps_only_the_likeliest_token(out):
    assert out["min_p1"].token_ids == out["greedy"].token_ids


def test_a_large_logit_bias_forces_a_token(engine, out):
    assert out["giraffe"].token_ids == engine.tokenizer.encode(GIRAFFE) * 8
    first = out["greedy"].token_ids[0]  # a strongly negative bias bans a token the answer would use
    assert first not in one(engine, LIST, max_tokens=8, logit_bias={first: -100}).token_ids


@pytest.mark.parametrize("penalty", ["presence_penalty", "frequency_penalty", "repetition_penalty"])
def test_penalties_make_a_repetitive_answer_less_repetitive(out, penalty):
    plain = out["repeat"]
    assert repeats(plain.token_ids) > 0.5, plain.text  # the precondition: it does repeat
    penalized = out[penalty]
    assert repeats(penalized.token_ids) < repeats(plain.token_ids) - 0.2, (plain.text, penalized.text)


def test_negative_presence_penalty_encourages_repetition(out):
    assert repeats(out["sticky"].token_ids) > repeats(out["list30"].token_ids)


def test_min_tokens_holds_the_end_back(out):
    short, held = out["short"], out["held"]
    assert short.finish_reason == "stop" and short.completion_tokens < 30, short.text  # the precondition
    assert held.completion_tokens >= 40
    assert held.token_ids[: short.completion_tokens] == short.token_ids[: short.completion_tokens]


def test_stop_token_ids_end_the_answer(engine, out):
    full = out["greedy"]
    newline = engine.tokenizer.encode("\n")[0]
    assert newline in full.token_ids  # the precondition
    cut = one(engine, LIST, stop_token_ids=[newline])
    assert cut.finish_reason == "stop" and newline not in cut.token_ids[:-1]
    assert full.text.startswith(cut.text) and len(cut.text) < len(full.text)


def test_logprobs_are_the_models_and_the_chosen_token_is_the_likeliest_when_greedy(engine, out):
    lp = out["logprobs"]
    assert len(lp.logprobs) == 6
    first = lp.logprobs[0]
    ref = engine.prompt_logits(LIST).astype(np.float64)
    ref = ref - np.log(np.exp(ref - ref.max()).sum()) - ref.max()
    assert first["logprob"] == pytest.approx(ref[lp.token_ids[0]], abs=1e-3)
    tops = first["top_logprobs"]
    assert len(tops) == 5 and tops[0]["token"] == first["token"]  # greedy: the chosen one is the top one
    assert [t["logprob"] for t in tops] == sorted((t["logprob"] for t in tops), reverse=True)
    assert "".join(e["token"] for e in lp.logprobs) == lp.text
    assert all(bytes(e["bytes"]).decode() == e["token"] for e in lp.logprobs)
    assert out["greedy"].logprobs is None and out["greedy"].token_ids[:6] == lp.token_ids  # asking changes nothing
    assert [e["top_logprobs"] for e in out["logprobs0"].logprobs] == [[], [], []]


def test_tokens_outside_the_vocabulary_are_refused(engine):
    vocab = engine.model_config.vocab_size
    with pytest.raises(RequestError, match="logit_bias: token id"):
        engine.add_request(LIST, SamplingParams(logit_bias={vocab: 1.0}))
    with pytest.raises(RequestError, match="stop_token_ids: token id"):
        engine.add_request(LIST, SamplingParams(stop_token_ids=[vocab + 5]))
    assert not engine.has_unfinished_requests()


@pytest.mark.slow
def test_penalized_requests_survive_preemption_and_batching_unchanged():
    """Eight penalized requests in a KV cache too small for them all: preempted requests refill their
    sampler state from their tokens, and every answer equals the same request run alone. Greedy: a
    sampled token's logits can differ in their last bits between batch shapes (an unpenalized one's too),
    which moves a draw across a boundary now and then; the argmax does not move."""
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    loaded = load_gguf(resolve_gguf("smollm2-135m"))
    small = LLMEngine(
        EngineConfig(max_num_seqs=8, max_num_batched_tokens=32, max_model_len=256, num_blocks=16), loaded=loaded
    )
    prompts = [REPEAT, LIST] * 4
    params = [
        SamplingParams(
            max_tokens=36,
            ignore_eos=True,
            presence_penalty=0.5 * (i % 3),
            frequency_penalty=0.3 * (i % 2),
            repetition_penalty=1.0 + 0.2 * (i % 4),
            logit_bias={i + 100: 3.0},
        )
        for i in range(8)
    ]
    together = small.generate(prompts, params)
    assert small.stats().num_preemptions_total > 0, "the test must exercise preemption"
    alone = [small.generate([p], [sp])[0] for p, sp in zip(prompts, params)]
    for a, t in zip(alone, together):
        assert t.token_ids == a.token_ids
    small.step()  # an idle step: the runner hears of the last finished request and hands its row back
    assert not small.runner._state_rows and len(small.runner._free_rows) == 8  # every row handed back
