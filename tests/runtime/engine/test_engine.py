"""The continuous-batching engine: tiny-model unit tests, then the real SmolLM2 under pressure."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import subprocess
import sys
import weakref

import numpy as np
import pytest

from runtime.api import EngineConfig, RequestError, SamplingParams
from runtime.core.kv_sizing import KVShape, blocks_for_budget, kv_bytes, kv_bytes_per_block
from runtime.engine.async_engine import AsyncLLMEngine
from runtime.engine.llm_engine import LLMEngine
from tests.support.engines import TINY_PROMPTS, tiny_engine


def test_pallas_interpret_and_xla_engines_agree(tiny_path):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (6, 3, 8, 5)]
    results = {}
    for backend in ("xla", "pallas_interpret"):
        eng = tiny_engine(tiny_path, attention_backend=backend)
        results[backend] = [o.token_ids for o in eng.generate(TINY_PROMPTS, params)]
    assert results["xla"] == results["pallas_interpret"]
    assert [len(t) for t in results["xla"]] == [6, 3, 8, 5]


# bytes per kv head and token: head_dim 16 x 4 B (float32); 16 x 1 B + a 2 B bfloat16 scale (int8)
@pytest.mark.parametrize("kv_dtype,head_bytes", [("float32", 16 * 4), ("int8", 16 * 1 + 2)])
def test_kv_arrays_match_the_calculator(tiny_path, kv_dtype, head_bytes):
    budget = 3 * 2**20
    eng = tiny_engine(tiny_path, num_blocks=None, kv_cache_bytes=budget, kv_dtype=kv_dtype)
    shape = KVShape.of(eng.model_config)
    per_block = kv_bytes_per_block(shape, kv_dtype, 16)
    assert eng.num_blocks == blocks_for_budget(shape, kv_dtype, 16, budget) == budget // per_block
    # 2 x layers x kv_heads x head bytes x tokens, tokens = blocks x block size
    assert eng.runner.kv_cache_bytes() == 2 * 2 * 2 * head_bytes * (eng.num_blocks * 16)
    assert eng.runner.kv_cache_bytes() == kv_bytes(shape, kv_dtype, eng.num_blocks * 16)
    for k, v in eng.runner.kv_caches:
        assert k.shape == v.shape == (eng.num_blocks, 16, 2, 16)
        if kv_dtype == "int8":  # codes + one scale per token slot and kv head
            assert k.codes.dtype == v.codes.dtype == np.int8
            assert k.scales.shape == v.scales.shape == (eng.num_blocks, 16, 2)


def test_kv_calc_cli():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "runtime.kv_calc",
            "--model",
            "smollm2-135m",
            "--context",
            "32768",
            "--concurrency",
            "64",
            "--kv-dtype",
            "bfloat16",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    s = json.loads(out.stdout)
    # SmolLM2-135M: 30 layers, 3 kv heads, head_dim 64 -> 2*30*3*64*2 bytes = 23,040 bytes per token
    assert s["bytes_per_token"] == 23040
    assert s["kv_bytes"] == 23040 * 32768 * 64
    assert "GiB" in out.stderr
    # The TPU cache's layout: each token's 3 x 64 lanes padded to 256 (runtime.quant.kv.LanePages)
    tpu = subprocess.run(
        [sys.executable, "-m", "runtime.kv_calc", "--model", "smollm2-135m", "--context", "32768", "--tpu"],
        capture_output=True,
        text=True,
        check=True,
    )
    t = json.loads(tpu.stdout)
    assert t["lanes"] == 256 and t["bytes_per_token"] == 2 * 30 * 256 * 2  # bfloat16: the default --kv-dtype
    assert "256 lanes" in tpu.stderr


def test_bad_request_fails_alone(tiny_path):
    eng = tiny_engine(tiny_path)
    ok = eng.add_request("hello", SamplingParams(max_tokens=4, ignore_eos=True))
    with pytest.raises(RequestError, match="maximum context"):
        eng.add_request("x" * 400, SamplingParams(max_tokens=4))
    with pytest.raises(RequestError, match="exceeds the maximum context"):
        eng.add_request("hello", SamplingParams(max_tokens=500))
    with pytest.raises(RequestError, match="empty"):
        eng.add_request("   ")
    with pytest.raises(RequestError, match="token ids"):
        eng.add_request([1, 2, 10**9])
    done = []
    while eng.has_unfinished_requests():
        done += [o for o in eng.step() if o.finished]
    assert [o.request_id for o in done] == [ok] and done[0].completion_tokens == 4
    assert eng.scheduler.kv_cache_manager.num_free_blocks == eng.num_blocks - 1


def test_priming_the_programs_changes_no_token(tiny_path):
    """prime_programs runs every compiled step once on dummy inputs before serving: requests after it get
    the tokens they got before it, greedy and seeded (the KV pages and the sampler state are intact)."""
    prompts = ["hello there", "a b c d e f g h i j k l m n o p"]
    params = [SamplingParams(max_tokens=8, ignore_eos=True), SamplingParams(max_tokens=8, temperature=0.9, seed=3)]
    eng = tiny_engine(tiny_path, prime_programs=True, max_num_seqs=2, max_num_batched_tokens=16)
    assert eng.warmup() == len(eng.runner._compiled)  # warm-up primed them all, on this thread
    before = [o.token_ids for o in eng.generate(prompts, params)]
    for t, s in list(eng.runner._compiled):
        eng.runner.prime(t, s)
    assert [o.token_ids for o in eng.generate(prompts, params)] == before


def test_stats_count_decode_only_steps_and_the_weights_they_read(tiny_path):
    """Two requests of 5 tokens arriving together: one prefill step gives each its first token, then 4
    steps decode both (the advisor's mean decode batch: 2); the weights' bytes are the parameters'."""
    import jax

    eng = tiny_engine(tiny_path)
    eng.generate(["hello", "world"], SamplingParams(max_tokens=5, ignore_eos=True))
    s = eng.stats()
    assert (s.decode_steps, s.decode_seqs) == (4, 8) and s.decode_seconds > 0
    assert s.weight_bytes == sum(x.nbytes for x in jax.tree_util.tree_leaves(eng.runner.params)) > 0


def test_stop_string_ends_request_and_frees_blocks(tiny_path):
    eng = tiny_engine(tiny_path)
    [full] = eng.generate(["hello there"], SamplingParams(max_tokens=12, ignore_eos=True))
    assert len(full.text) > 4
    stop = full.text[3:5]
    [cut] = eng.generate(["hello there"], SamplingParams(max_tokens=12, ignore_eos=True, stop=(stop,)))
    assert cut.finish_reason == "stop"
    assert cut.text == full.text[: full.text.index(stop)]
    assert eng.scheduler.kv_cache_manager.num_free_blocks == eng.num_blocks - 1


def test_the_final_output_carries_typed_metrics_in_time_order(tiny_path):
    eng = tiny_engine(tiny_path)
    outs = []
    eng.add_request("hello there", SamplingParams(max_tokens=5, ignore_eos=True))
    while eng.has_unfinished_requests():
        outs.extend(eng.step())
    *deltas, final = outs
    assert all(o.metrics is None for o in deltas) and final.finished
    m = final.metrics
    assert 0 <= m.queue_s <= m.ttft_s <= m.e2e_s and m.tpot_s > 0 and m.num_preemptions == 0
    # the wire form round-trips (runtime server -> gateway)
    assert type(m).from_dict(m.to_dict()) == m


def test_async_engine_streams_and_abort_frees_blocks(tiny_path):
    eng = tiny_engine(tiny_path)
    front = AsyncLLMEngine(eng)

    async def main():
        chunks = []
        async for out in front.generate("hello there", SamplingParams(max_tokens=8, ignore_eos=True)):
            chunks.append(out)
        assert chunks[-1].finished and chunks[-1].completion_tokens == 8
        # a consumer that walks away mid-stream: the request is aborted and its blocks freed
        agen = front.generate("the cat sat", SamplingParams(max_tokens=100, ignore_eos=True))
        await agen.__anext__()
        await agen.aclose()
        for _ in range(100):
            await asyncio.sleep(0.02)
            if not eng.has_unfinished_requests():
                break
        assert not eng.has_unfinished_requests()
        with pytest.raises(RequestError):
            async for _ in front.generate("", SamplingParams()):
                pass
        return "".join(c.text for c in chunks)

    try:
        text = asyncio.run(main())
    finally:
        front.shutdown()
    assert text
    assert eng.scheduler.kv_cache_manager.num_free_blocks == eng.num_blocks - 1


# ---------------------------------------------------------------- the real model

REAL_PROMPTS = [
    "The capital of France is",
    [{"role": "user", "content": "Give me three tips for better sleep."}],
    "def is_prime(n):",
    [{"role": "user", "content": "What is the boiling point of water in Fahrenheit?"}],
    "Once upon a time in a small village by the sea,",
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Define entropy."}],
    "List of planets: Mercury, Venus,",
    "The quick brown fox",
]


@pytest.fixture(scope="module")
def real_engine(smollm2):
    from runtime.loading.gguf import load_gguf

    loaded = load_gguf(smollm2_path())
    # A tiny KV cache (15 usable blocks of 16 tokens) and a 32-token budget force chunked prefill and
    # preemption with 8 concurrent requests of 20-90 tokens each.
    eng = LLMEngine(
        EngineConfig(
            max_num_seqs=8, max_num_batched_tokens=32, max_model_len=256, num_blocks=16, attention_backend="xla"
        ),
        loaded=loaded,
    )
    eng.warmup()
    return eng


def smollm2_path():
    from runtime.loading.presets import resolve_gguf

    return resolve_gguf("smollm2-135m")


@pytest.mark.slow
def test_concurrent_greedy_equals_single_request(real_engine, smollm2):
    lengths = [24, 40, 16, 32, 48, 8, 36, 28]
    # Most run to max_tokens (ignore_eos) so the cache fills up; two may stop on their own.
    params = [SamplingParams(max_tokens=n, ignore_eos=i not in (1, 5)) for i, n in enumerate(lengths)]
    outs = real_engine.generate(REAL_PROMPTS, params)
    assert real_engine.stats().num_preemptions_total > 0, "the test must exercise preemption"
    stop_ids = set(smollm2.tokenizer.stop_token_ids)
    for prompt, sp, out in zip(REAL_PROMPTS, params, outs):
        ids = real_engine.encode(prompt)
        assert len(ids) > 0
        _, ref = smollm2.generate(ids, sp)
        got = [t for t in out.token_ids if t not in stop_ids] if out.finish_reason == "stop" else out.token_ids
        assert got == ref.token_ids, prompt
        assert out.finish_reason == ref.finish_reason
    assert real_engine.scheduler.kv_cache_manager.num_free_blocks == real_engine.num_blocks - 1


@pytest.mark.slow
def test_no_compilation_after_warmup_over_120_mixed_requests(real_engine):
    from runtime.worker.model_runner import compile_counter

    counter = compile_counter()
    rng = random.Random(0)
    words = "the of and to in is was for on that with as by at from it an be this are or".split()
    prompts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(120)]
    params = [
        SamplingParams(
            max_tokens=rng.randint(1, 12),
            temperature=rng.choice([0.0, 0.8]),
            seed=i,
            top_p=rng.choice([1.0, 0.9]),
            ignore_eos=True,
        )
        for i in range(120)
    ]
    before = counter.count
    outs = real_engine.generate(prompts, params)
    assert counter.count == before, f"{counter.count - before} compilations after warm-up"
    assert [o.completion_tokens for o in outs] == [p.max_tokens for p in params]
    assert real_engine.scheduler.kv_cache_manager.num_free_blocks == real_engine.num_blocks - 1


SYSTEM = (
    "You are a careful assistant for a small bakery. You answer questions about opening hours, "
    "ingredients, allergens, custom cakes and deliveries. Opening hours are 7am to 6pm on weekdays and "
    "8am to 2pm on Saturdays; the bakery is closed on Sundays. Be brief and friendly."
)


@pytest.mark.slow
def test_prefix_caching_shares_a_system_prompt_and_changes_no_token(real_engine, smollm2):
    """Eight chats behind one long system prompt, under chunked prefill and preemption (the tiny
    cache of ``real_engine``): the later ones reuse its KV blocks, and every greedy answer is
    token-identical to the single-request generator's, which has no prefix cache."""
    assert real_engine.config.enable_prefix_caching
    questions = [
        "When do you open on Saturday?",
        "Do you sell gluten-free bread?",
        "Can I order a cake?",
        "Are you open on Sunday?",
        "Do you deliver?",
        "What time do you close?",
        "Any vegan options?",
        "Do your cookies contain nuts?",
    ]
    prompts = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}] for q in questions]
    kv = real_engine.scheduler.kv_cache_manager
    hits_before, preempt_before = kv.prefix_cache_hits, real_engine.stats().num_preemptions_total
    shared_before = real_engine.stats().shared_prefix_tokens
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (12, 20, 8, 16, 24, 10, 14, 18)]
    outs = real_engine.generate(prompts, params)
    assert kv.prefix_cache_hits - hits_before >= 5 * 64  # the system prompt's full blocks, shared
    # the advisor's shared-prefix share counts the same blocks (at least: it also counts re-admissions)
    assert real_engine.stats().shared_prefix_tokens - shared_before >= kv.prefix_cache_hits - hits_before
    assert real_engine.stats().num_preemptions_total > preempt_before, "the test must exercise preemption"
    for prompt, sp, out in zip(prompts, params, outs):
        _, ref = smollm2.generate(real_engine.encode(prompt), sp)
        assert out.token_ids == ref.token_ids, prompt[-1]["content"]
    assert kv.num_free_blocks == real_engine.num_blocks - 1


def test_score_is_teacher_forced_prefill_through_the_paged_cache(tiny_path):
    """``score``: logits at every position, the same whatever the chunking (later chunks read earlier
    ones from the paged cache), and its last row picks the engine's own greedy next token."""
    eng = tiny_engine(tiny_path)
    ids = eng.encode("the cat sat on the mat and then the dog came in and sat down too")
    whole = eng.score(ids, chunk=64)
    chunked = eng.score(ids, chunk=16)
    assert whole.shape == (len(ids), eng.model_config.vocab_size)
    np.testing.assert_allclose(chunked, whole, rtol=1e-4, atol=1e-4)
    first = eng.generate([ids], SamplingParams(max_tokens=1, ignore_eos=True))[0].token_ids[0]
    assert int(whole[-1].argmax()) == first
    # teacher forcing: row t predicts token t + 1, so scoring ids + [first] leaves row len(ids) - 1 unchanged
    np.testing.assert_allclose(eng.score(ids + [first], chunk=64)[len(ids) - 1], whole[-1], rtol=1e-4, atol=1e-4)


def test_background_compilation_serves_before_every_bucket_is_ready(tiny_path):
    """``warmup(background=True)``: two buckets before it returns (the largest, the one-token one), the rest
    on a thread; steps meanwhile run padded in a compiled bucket, with the same tokens; shutdown joins it."""
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (6, 3, 8, 5)]
    ref = tiny_engine(tiny_path)
    ref.warmup()
    eng = tiny_engine(tiny_path)
    runner = eng.runner
    assert eng.warmup(background=True) == len(runner.buckets)
    assert {runner.buckets[0], runner.buckets[-1]} <= set(runner._compiled)
    assert runner._bucket(1, 1) in runner._compiled  # served at once, padded if its own is not ready
    got = [o.token_ids for o in eng.generate(TINY_PROMPTS, params)]
    assert got == [o.token_ids for o in ref.generate(TINY_PROMPTS, params)]
    assert runner.wait_compiled(600) and runner.all_compiled
    assert set(runner._compiled) == set(runner.buckets)
    runner.stop_background()  # idempotent once done


def test_an_engine_warmed_in_the_background_is_freed_once_dropped(tiny_path):
    """The exit hook that joins the compile thread holds the thread, not the runner: a bound method
    registered with ``atexit`` kept every such engine, weights and KV cache, alive until the process
    ended (586 MB per SmolLM2 gateway test module). Dropped, it is collected, before and after shutdown."""
    for stop_first in (False, True):
        eng = tiny_engine(tiny_path)
        eng.warmup(background=True)
        assert eng.runner.wait_compiled(600)
        if stop_first:
            eng.runner.stop_background()
        ref = weakref.ref(eng.runner)
        del eng
        gc.collect()
        assert ref() is None, [type(r).__name__ for r in gc.get_referrers(ref())]
