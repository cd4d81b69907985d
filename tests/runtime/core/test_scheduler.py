"""Scheduler and request tests with no model: a fake "model" returns one fixed token per step.

Block ids, token counts and orders are asserted exactly. Block ids follow the pool's rules: block 0
is the null block, fresh blocks come out lowest id first, freed blocks go to the back of the free
queue tail first.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest

from runtime.api import SamplingParams
from runtime.core.request import Request, RequestStatus
from runtime.core.scheduler import RequestUpdate, Scheduler, SchedulerConfig, SchedulerOutput
from tests.support.fakes import FakeClock


def make_scheduler(**overrides) -> Scheduler:
    cfg = dict(max_num_batched_tokens=64, max_num_seqs=8, max_model_len=64, block_size=4, num_blocks=32)
    cfg.update(overrides)
    return Scheduler(SchedulerConfig(**cfg), clock=FakeClock(0.0, step=1.0))  # every event its own time


def make_request(req_id: str, num_prompt: int, max_tokens: int = 16, eos=(), **sp) -> Request:
    prompt = [1000 + i for i in range(num_prompt)]
    params = SamplingParams(max_tokens=max_tokens, **sp)
    return Request(req_id, prompt, params, eos_token_ids=eos, arrival_time=0.0)


def fake_token(request: Request) -> int:
    """Deterministic "model": the next token depends on the request and its length only, so a
    request recomputed after a preemption must produce exactly the tokens it would have anyway."""
    return (sum(map(ord, request.request_id)) * 31 + request.num_tokens * 7) % 50


def step(sched: Scheduler, token_fn=fake_token) -> tuple[SchedulerOutput, list[RequestUpdate]]:
    out = sched.schedule()
    sampled = {r: token_fn(sched.requests[r]) for r in out.sample_req_ids}
    return out, sched.update_from_output(out, sampled)


# ---- the basic step ---------------------------------------------------------------------------


def test_chunked_prefill_splits_a_long_prompt_then_decodes_one_token_a_step():
    sched = make_scheduler(max_num_batched_tokens=8)
    req = make_request("a", 20, max_tokens=3)
    sched.add_request(req)

    chunks, computed, sampled, tables = [], [], [], []
    while sched.has_unfinished_requests():
        out, _ = step(sched, token_fn=lambda r: 7)
        chunks.append(out.num_scheduled_tokens["a"])
        computed.append(out.num_computed_tokens["a"])
        sampled.append(out.sample_req_ids)
        tables.append(out.block_tables["a"])
    assert chunks == [8, 8, 4, 1, 1]
    assert computed == [0, 8, 16, 20, 21]
    assert sampled == [(), (), ("a",), ("a",), ("a",)]
    assert tables == [[1, 2], [1, 2, 3, 4], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]]
    assert req.output_token_ids == [7, 7, 7]
    assert req.status is RequestStatus.FINISHED_LENGTH and req.finish_reason == "length"
    assert sched.kv_cache_manager.num_free_blocks == 31


def test_output_carries_the_tokens_to_compute():
    sched = make_scheduler(max_num_batched_tokens=8)
    req = make_request("a", 10, max_tokens=2)
    sched.add_request(req)
    out1, up1 = step(sched, token_fn=lambda r: 42)
    assert out1.token_ids == {"a": req.prompt_token_ids[:8]}
    assert out1.scheduled_new_reqs == ("a",) and out1.scheduled_running_reqs == ()
    assert out1.sampling_params == {"a": req.sampling_params}
    assert up1 == []  # a prompt still catching up produces nothing
    out2, up2 = step(sched, token_fn=lambda r: 42)
    assert out2.token_ids == {"a": req.prompt_token_ids[8:]}
    assert out2.scheduled_new_reqs == () and out2.scheduled_running_reqs == ("a",)
    assert up2 == [RequestUpdate("a", (42,), None)]
    out3, up3 = step(sched, token_fn=lambda r: 43)
    assert out3.token_ids == {"a": [42]} and out3.num_computed_tokens == {"a": 10}
    assert up3 == [RequestUpdate("a", (43,), "length")]
    assert up3[0].finished
    out4 = sched.schedule()
    assert out4.is_empty and out4.finished_req_ids == ("a",)
    assert sched.schedule().finished_req_ids == ()  # reported once


def test_running_requests_come_before_waiting_ones():
    sched = make_scheduler(max_num_batched_tokens=8)
    sched.add_request(make_request("a", 6))
    sched.add_request(make_request("b", 6))
    out1, _ = step(sched)
    assert out1.num_scheduled_tokens == {"a": 6, "b": 2}
    assert out1.sample_req_ids == ("a",)

    sched.add_request(make_request("c", 10))
    out2, _ = step(sched)
    # a decodes, b finishes its prompt, c gets what is left of the budget.
    assert list(out2.num_scheduled_tokens.items()) == [("a", 1), ("b", 4), ("c", 3)]
    assert out2.total_num_scheduled_tokens == 8
    assert out2.scheduled_running_reqs == ("a", "b") and out2.scheduled_new_reqs == ("c",)
    assert out2.sample_req_ids == ("a", "b")
    assert out2.block_tables == {"a": [1, 2], "b": [3, 4], "c": [5]}

    out3, _ = step(sched)
    assert list(out3.num_scheduled_tokens.items()) == [("a", 1), ("b", 1), ("c", 6)]


def test_waiting_requests_do_not_overtake_when_chunking_is_off():
    sched = make_scheduler(max_num_batched_tokens=64, enable_chunked_prefill=False)
    for rid, n in (("a", 40), ("b", 30), ("c", 5)):
        sched.add_request(make_request(rid, n, max_tokens=8))
    out1, _ = step(sched)
    # b does not fit in the 24 tokens left and is not split; c, behind it, waits too.
    assert out1.num_scheduled_tokens == {"a": 40}
    out2, _ = step(sched)
    assert out2.num_scheduled_tokens == {"a": 1, "b": 30, "c": 5}


def test_long_prefill_token_threshold_caps_each_request():
    sched = make_scheduler(max_num_batched_tokens=16, long_prefill_token_threshold=4)
    sched.add_request(make_request("a", 10))
    sched.add_request(make_request("b", 3))
    sched.add_request(make_request("c", 9))
    out, _ = step(sched)
    assert out.num_scheduled_tokens == {"a": 4, "b": 3, "c": 4}
    out, _ = step(sched)
    assert out.num_scheduled_tokens == {"a": 4, "b": 1, "c": 4}


def test_max_num_seqs_limits_running_requests():
    sched = make_scheduler(max_num_seqs=2)
    sched.add_request(make_request("a", 4, max_tokens=1))
    sched.add_request(make_request("b", 4, max_tokens=3))
    sched.add_request(make_request("c", 4, max_tokens=3))
    out1, up1 = step(sched)
    assert out1.num_scheduled_tokens == {"a": 4, "b": 4}
    assert [u.request_id for u in up1 if u.finished] == ["a"]  # max_tokens=1: done after prefill
    assert sched.num_running == 1 and sched.num_waiting == 1
    out2, _ = step(sched)
    assert out2.finished_req_ids == ("a",)
    assert out2.num_scheduled_tokens == {"b": 1, "c": 4}
    # a's block 1 went back to the end of the free queue; c gets the next never-used block.
    assert out2.block_tables == {"b": [2, 3], "c": [4]}


# ---- stop conditions --------------------------------------------------------------------------


def test_eos_and_stop_tokens_stop_unless_eos_is_ignored():
    sched = make_scheduler()
    sched.add_request(make_request("eos", 3, eos=[5, 6]))
    sched.add_request(make_request("eos2", 3, eos=[5, 6]))
    sched.add_request(make_request("stop", 3, eos=[5], stop_token_ids=(9,)))
    sched.add_request(make_request("ign", 3, max_tokens=3, eos=[5], stop_token_ids=(9,), ignore_eos=True))
    tokens = {"eos": [8, 5], "eos2": [6], "stop": [8, 9], "ign": [5, 9, 5]}
    finished: dict[str, tuple[str | None, tuple[int, ...]]] = {}
    while sched.has_unfinished_requests():
        _, updates = step(sched, token_fn=lambda r: tokens[r.request_id][r.num_output_tokens])
        for u in updates:
            if u.finished:
                finished[u.request_id] = (u.finish_reason, u.new_token_ids)
    assert finished == {"eos": ("stop", (5,)), "eos2": ("stop", (6,)), "stop": ("stop", (9,)), "ign": ("length", (5,))}


def test_update_rejects_missing_or_unexpected_sampled_tokens_without_changing_state():
    sched = make_scheduler(max_num_batched_tokens=4)
    sched.add_request(make_request("a", 2))
    sched.add_request(make_request("b", 6))
    out = sched.schedule()
    assert out.num_scheduled_tokens == {"a": 2, "b": 2} and out.sample_req_ids == ("a",)
    with pytest.raises(ValueError, match=r"missing \['a'\]"):
        sched.update_from_output(out, {})
    with pytest.raises(ValueError, match=r"unexpected \['b'\]"):
        sched.update_from_output(out, {"a": 1, "b": 2})
    assert sched.requests["a"].num_computed_tokens == 0
    assert sched.requests["b"].num_computed_tokens == 0
    sched.update_from_output(out, {"a": 1})
    assert sched.requests["a"].output_token_ids == [1]
    assert sched.requests["b"].num_computed_tokens == 2


# ---- preemption -------------------------------------------------------------------------------


def test_preemption_by_recompute_exact_trace():
    # 4 usable blocks of 4 tokens; budget 6; at most 2 running requests.
    sched = make_scheduler(max_num_batched_tokens=6, max_num_seqs=2, num_blocks=5, max_model_len=32)
    a = make_request("a", 4, max_tokens=6)
    b = make_request("b", 4, max_tokens=6)
    c = make_request("c", 4, max_tokens=1)
    for r in (a, b, c):
        sched.add_request(r)

    def next_token(r: Request) -> int:
        return {"a": 100, "b": 200, "c": 300}[r.request_id] + r.num_output_tokens

    trace = []
    while sched.has_unfinished_requests():
        out, updates = step(sched, token_fn=next_token)
        trace.append((out.num_scheduled_tokens, out.block_tables, out.preempted_req_ids))

    assert trace[0] == ({"a": 4, "b": 2}, {"a": [1], "b": [2]}, ())
    assert trace[1] == ({"a": 1, "b": 2}, {"a": [1, 3], "b": [2]}, ())
    assert trace[2] == ({"a": 1, "b": 1}, {"a": [1, 3], "b": [2, 4]}, ())
    assert trace[3] == ({"a": 1, "b": 1}, {"a": [1, 3], "b": [2, 4]}, ())
    assert trace[4] == ({"a": 1, "b": 1}, {"a": [1, 3], "b": [2, 4]}, ())
    # Step 6: a's 9th token needs a third block and none is free. b, the last admitted, is
    # preempted (its blocks go back tail first: [4, 2]) and a takes block 4.
    assert trace[5] == ({"a": 1}, {"a": [1, 3, 4]}, ("b",))
    # a finished in step 6. b resumes first (front of the queue, ahead of c), recomputing its
    # 4 prompt + 4 output tokens: 6 now, 2 next step, and only then does it get a new token.
    assert trace[6] == ({"b": 6}, {"b": [2, 4]}, ())
    assert trace[7] == ({"b": 2, "c": 4}, {"b": [2, 4], "c": [3]}, ())
    assert trace[8] == ({"b": 1}, {"b": [2, 4, 1]}, ())
    assert len(trace) == 9

    assert a.output_token_ids == [100, 101, 102, 103, 104, 105] and a.num_preemptions == 0
    # b produced 4 tokens before the preemption, kept them, and went on from there.
    assert b.output_token_ids == [200, 201, 202, 203, 204, 205]
    assert b.num_preemptions == 1 and b.finish_reason == "length"
    assert c.output_token_ids == [300]
    assert sched.num_preemptions_total == 1
    assert sched.kv_cache_manager.num_free_blocks == 4


def test_preempted_request_state_and_resume_classification():
    sched = make_scheduler(max_num_batched_tokens=6, max_num_seqs=2, num_blocks=5, max_model_len=32)
    sched.add_request(make_request("a", 4, max_tokens=6))
    sched.add_request(make_request("b", 4, max_tokens=6))
    sched.add_request(make_request("c", 4, max_tokens=1))
    for _ in range(5):
        step(sched)
    b = sched.requests["b"]
    outputs_before = list(b.output_token_ids)
    assert len(outputs_before) == 4 and b.num_computed_tokens == 7

    out, _ = step(sched)  # step 6: b is preempted
    assert out.preempted_req_ids == ("b",) and "b" not in out.num_scheduled_tokens
    assert b.status is RequestStatus.PREEMPTED
    assert b.num_computed_tokens == 0
    assert b.output_token_ids == outputs_before
    assert [r.request_id for r in sched.waiting] == ["b", "c"]  # front of the queue
    assert sched.kv_cache_manager.get_block_ids("b") == []

    out, updates = step(sched)  # step 7: resumed, still catching up
    assert out.scheduled_resumed_reqs == ("b",) and out.scheduled_new_reqs == ()
    assert out.num_computed_tokens == {"b": 0}
    assert out.token_ids["b"] == b.prompt_token_ids + outputs_before[:2]
    assert out.sample_req_ids == () and updates == []
    assert b.status is RequestStatus.RUNNING and b.output_token_ids == outputs_before

    out, _ = step(sched)  # step 8: caught up -> sampled; c is new
    assert out.token_ids["b"] == outputs_before[2:]
    assert out.scheduled_running_reqs == ("b",) and out.scheduled_new_reqs == ("c",)
    assert out.sample_req_ids == ("b", "c")
    assert len(b.output_token_ids) == 5


def test_a_request_that_cannot_grow_preempts_itself_and_stops():
    # a (admitted first) and b each hold 2 of the 4 usable blocks; b needs a third.
    sched = make_scheduler(max_num_batched_tokens=64, num_blocks=5, max_model_len=32)
    sched.add_request(make_request("a", 8, max_tokens=8))
    sched.add_request(make_request("b", 7, max_tokens=8))
    out, _ = step(sched)
    assert out.block_tables == {"a": [1, 2], "b": [3, 4]}
    out, _ = step(sched)  # a needs block for token 8 first: b is preempted for it
    assert out.preempted_req_ids == ("b",)
    assert out.block_tables == {"a": [1, 2, 4]}
    assert sched.num_waiting == 1 and sched.num_running == 1

    # Now b is the newest again: make it run beside a and be the one that must grow.
    sched2 = make_scheduler(max_num_batched_tokens=64, num_blocks=5, max_model_len=32)
    sched2.add_request(make_request("a", 5, max_tokens=8))
    sched2.add_request(make_request("b", 8, max_tokens=8))
    out, _ = step(sched2)
    assert out.block_tables == {"a": [1, 2], "b": [3, 4]}
    out, _ = step(sched2)  # a fits its 6th token; b's 9th token needs a block: b preempts itself
    assert out.num_scheduled_tokens == {"a": 1}
    assert out.preempted_req_ids == ("b",)
    assert out.scheduled_new_reqs == () and out.scheduled_resumed_reqs == ()  # no admissions
    assert sched2.kv_cache_manager.block_pool.free_block_queue.block_ids() == [4, 3]


# ---- abort and rejection ----------------------------------------------------------------------


def test_abort_frees_blocks_at_once_running_or_waiting():
    sched = make_scheduler(max_num_seqs=1)
    sched.add_request(make_request("a", 9))
    sched.add_request(make_request("b", 4))
    step(sched)
    assert sched.kv_cache_manager.get_block_ids("a") == [1, 2, 3]

    assert sched.abort_request("a") is True
    a_blocks = sched.kv_cache_manager.block_pool.free_block_queue.block_ids()[-3:]
    assert a_blocks == [3, 2, 1]
    assert sched.kv_cache_manager.num_free_blocks == 31
    assert sched.abort_request("a") is False  # twice is harmless
    assert sched.abort_request("nope") is False
    assert sched.abort_request("b") is True  # still waiting
    assert not sched.has_unfinished_requests()
    out = sched.schedule()
    assert out.is_empty and out.finished_req_ids == ("a", "b")


def test_abort_between_schedule_and_update_is_skipped():
    sched = make_scheduler()
    a = make_request("a", 3)
    sched.add_request(a)
    sched.add_request(make_request("b", 3))
    out = sched.schedule()
    sched.abort_request("a")
    updates = sched.update_from_output(out, {"b": 11})  # the runner may or may not send a's
    assert updates == [RequestUpdate("b", (11,), None)]
    assert a.status is RequestStatus.FINISHED_ABORTED and a.finish_reason == "abort"
    assert a.output_token_ids == [] and a.num_computed_tokens == 0


def test_rejects_requests_that_can_never_fit():
    sched = make_scheduler(max_model_len=32, num_blocks=5)  # 4 usable blocks = 16 tokens
    too_long = r"\(30 tokens\) \+ max_tokens \(3\) = 33 exceeds max_model_len \(32\)"
    with pytest.raises(ValueError, match=too_long):
        sched.add_request(make_request("long", 30, max_tokens=3))
    too_big = "needs up to 5 KV blocks of 4 tokens but the cache has only 4"
    with pytest.raises(ValueError, match=too_big):
        sched.add_request(make_request("big", 10, max_tokens=8))
    # 12 + 5 tokens, the last never fed back: 16 tokens of KV fit exactly.
    sched.add_request(make_request("fits", 12, max_tokens=5))
    with pytest.raises(ValueError, match="already scheduled"):
        sched.add_request(make_request("fits", 1))
    assert sched.num_waiting == 1
    while sched.has_unfinished_requests():
        step(sched)


# ---- config, params, request ------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(max_num_batched_tokens=0), "max_num_batched_tokens"),
        (dict(max_num_seqs=0), "max_num_seqs"),
        (dict(block_size=0), "block_size"),
        (dict(num_blocks=1), "num_blocks"),
        (dict(enable_chunked_prefill=False, max_num_batched_tokens=16), "enable_chunked_prefill"),
        (dict(long_prefill_token_threshold=0), "long_prefill_token_threshold"),
        (dict(long_prefill_token_threshold=8, enable_chunked_prefill=False), "needs enable_chunked_prefill"),
    ],
)
def test_scheduler_config_validation(overrides, message):
    with pytest.raises(ValueError, match=message):
        make_scheduler(**overrides)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(temperature=-0.1), "temperature"),
        (dict(temperature=float("nan")), "temperature"),
        (dict(top_p=0.0), "top_p"),
        (dict(top_p=1.5), "top_p"),
        (dict(top_k=-1), "top_k"),
        (dict(max_tokens=0), "max_tokens"),
        (dict(max_tokens=2.0), "max_tokens"),
        (dict(stop_token_ids=(1, -2)), "stop_token_ids"),
        (dict(stop_token_ids="ab"), "stop_token_ids"),
        (dict(seed=1.5), "seed"),
        (dict(ignore_eos=1), "ignore_eos"),
    ],
)
def test_sampling_params_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SamplingParams(**kwargs)


def test_sampling_params_defaults_and_normalization():
    p = SamplingParams()
    values = (p.temperature, p.top_p, p.top_k, p.max_tokens, p.stop_token_ids, p.seed, p.ignore_eos)
    assert values == (0.0, 1.0, 0, 16, (), None, False)
    assert p.is_greedy and not SamplingParams(temperature=0.7).is_greedy
    assert SamplingParams(stop_token_ids=[3, 4]).stop_token_ids == (3, 4)
    hash(SamplingParams(stop_token_ids=[3, 4]))


def test_request_properties_and_metrics():
    with pytest.raises(ValueError, match="empty"):
        Request("x", [])
    with pytest.raises(ValueError, match="request_id"):
        Request("", [1])
    with pytest.raises(ValueError, match="ints"):
        Request("x", [1, -1])
    with pytest.raises(ValueError, match="eos_token_ids"):
        Request("x", [1], eos_token_ids=[-3])
    assert Request("x", [1], eos_token_ids=[2, 2, 3]).eos_token_ids == frozenset({2, 3})

    sched = make_scheduler()  # its clock ticks 1.0 per reading
    req = make_request("a", 3, max_tokens=3)
    assert req.queue_time is None and req.time_to_first_token is None
    assert req.time_per_output_token is None
    sched.add_request(req)
    while sched.has_unfinished_requests():
        step(sched, token_fn=lambda r: 9)
    assert req.num_prompt_tokens == 3 and req.num_output_tokens == 3 and req.num_tokens == 6
    assert req.all_token_ids == [1000, 1001, 1002, 9, 9, 9]
    # Clock readings (1.0 per call): scheduled at 1, first token at 2, finished (third token) at 3.
    assert req.first_scheduled_time == 1.0 and req.first_token_time == 2.0
    assert req.finish_time == 3.0
    assert req.queue_time == 1.0 and req.time_to_first_token == 2.0
    assert req.time_per_output_token == pytest.approx(0.5)


def test_stats():
    sched = make_scheduler(max_num_seqs=1, num_blocks=9)
    sched.add_request(make_request("a", 8))
    sched.add_request(make_request("b", 8))
    step(sched)
    stats = sched.get_stats()
    assert (stats.num_running, stats.num_waiting, stats.num_free_blocks) == (1, 1, 6)
    assert stats.kv_cache_usage == pytest.approx(2 / 8) == sched.kv_cache_usage
    assert stats.num_preemptions_total == 0


# ---- randomized ---------------------------------------------------------------------------------


def check_invariants(sched: Scheduler, out: SchedulerOutput) -> None:
    cfg = sched.config
    mgr = sched.kv_cache_manager
    pool = mgr.block_pool
    free_ids = pool.free_block_queue.block_ids()
    assert len(free_ids) == len(set(free_ids)) == pool.num_free_blocks
    assert 0 not in free_ids
    holders: dict[int, int] = {}  # block id -> how many tables hold it (> 1 only when prefixes are shared)
    for req_id, blocks in mgr.req_to_blocks.items():
        assert len({b.block_id for b in blocks}) == len(blocks), f"{req_id} holds a block twice"
        for block in blocks:
            holders[block.block_id] = holders.get(block.block_id, 0) + 1
    if not cfg.enable_prefix_caching:
        assert all(n == 1 for n in holders.values()), "a block is shared with prefix caching off"
    assert not set(holders) & set(free_ids), "a block is both free and held"
    assert len(holders) + len(free_ids) == cfg.num_blocks - 1
    for block in pool.blocks:
        assert block.ref_cnt == holders.get(block.block_id, 0)
    # the prefix cache maps each hash to one block that carries it; shared blocks are always cached
    assert all(b.block_hash == h for h, b in pool.cached.items())
    assert sum(b.block_hash is not None for b in pool.blocks) == len(pool.cached)
    assert all(pool.blocks[i].block_hash is not None for i, n in holders.items() if n > 1)

    assert out.total_num_scheduled_tokens <= cfg.max_num_batched_tokens
    assert len(sched.running) <= cfg.max_num_seqs
    assert set(mgr.req_to_blocks) == {r.request_id for r in sched.running}
    for r in sched.running:
        assert r.status is RequestStatus.RUNNING
        # After update_from_output the table holds exactly the computed tokens.
        assert len(mgr.req_to_blocks[r.request_id]) == mgr.num_blocks_needed(r.num_computed_tokens)
        assert r.num_computed_tokens < r.num_tokens  # a sampled token is always pending
    for r in sched.waiting:
        assert r.status in (RequestStatus.WAITING, RequestStatus.PREEMPTED)
        assert r.num_computed_tokens == 0
    assert set(sched.requests) == {r.request_id for r in (*sched.running, *sched.waiting)}


class FakeKV:
    """What a device KV cache would hold: each slot records the (token, position) written to it.
    Before a step computes a request's tokens, everything its table says is already computed must
    read back as that request's own tokens: shared prefix blocks included."""

    def __init__(self, num_blocks: int, block_size: int):
        self.bs = block_size
        self.slots = [[None] * block_size for _ in range(num_blocks)]

    def step(self, sched: Scheduler, out: SchedulerOutput) -> None:
        for req_id, n in out.num_scheduled_tokens.items():
            req, table, start = sched.requests[req_id], out.block_tables[req_id], out.num_computed_tokens[req_id]
            for pos in range(start):
                assert self.slots[table[pos // self.bs]][pos % self.bs] == (req.all_token_ids[pos], pos), (
                    f"{req_id}: stale KV at position {pos}"
                )
            for pos in range(start, start + n):
                block = table[pos // self.bs]
                assert sched.kv_cache_manager.block_pool.blocks[block].ref_cnt == 1, "writing into a shared block"
                self.slots[block][pos % self.bs] = (req.all_token_ids[pos], pos)


@pytest.mark.parametrize("prefix_caching", [False, True], ids=["no-prefix-cache", "prefix-cache"])
def test_randomized_interleaving_keeps_the_pool_consistent(prefix_caching):
    rng = random.Random(1234)
    sched = make_scheduler(
        max_num_batched_tokens=16,
        max_num_seqs=6,
        max_model_len=40,
        block_size=4,
        num_blocks=12,
        enable_prefix_caching=prefix_caching,
    )
    mgr = sched.kv_cache_manager
    kv = FakeKV(12, 4)
    eos = 0
    all_requests: list[Request] = []
    num_aborted = 0
    next_id = 0
    for step_index in range(600):
        if step_index < 500 and rng.random() < 0.35:
            n_prompt = rng.randint(1, 25)
            req = make_request(
                f"r{next_id}",
                n_prompt,
                max_tokens=rng.randint(1, 40 - n_prompt),
                eos=[eos],
                ignore_eos=rng.random() < 0.3,
            )
            # prompts share prefixes (1000, 1001, ...) of random lengths; one in four starts apart
            if rng.random() < 0.25:
                req.prompt_token_ids[0] = 2000 + next_id
            next_id += 1
            sched.add_request(req)
            all_requests.append(req)
        if sched.requests and rng.random() < 0.03:
            num_aborted += sched.abort_request(rng.choice(sorted(sched.requests)))

        out = sched.schedule()
        # The fake runner checks what it is given against the requests' own state.
        for req_id, n in out.num_scheduled_tokens.items():
            req = sched.requests[req_id]
            start = out.num_computed_tokens[req_id]
            assert start == req.num_computed_tokens
            assert out.token_ids[req_id] == req.all_token_ids[start : start + n]
            assert len(out.block_tables[req_id]) * 4 >= start + n
            assert (start + n == req.num_tokens) == (req_id in out.sample_req_ids)
        assert not set(out.preempted_req_ids) & set(out.num_scheduled_tokens)
        kv.step(sched, out)
        sampled = {r: fake_token(sched.requests[r]) for r in out.sample_req_ids}
        if rng.random() < 0.05 and out.sample_req_ids:
            # An abort arriving while the step runs: its sampled token is dropped.
            victim = rng.choice(out.sample_req_ids)
            num_aborted += sched.abort_request(victim)
        sched.update_from_output(out, sampled)
        check_invariants(sched, out)

    while sched.has_unfinished_requests():
        out = sched.schedule()
        kv.step(sched, out)
        sched.update_from_output(out, {r: fake_token(sched.requests[r]) for r in out.sample_req_ids})
        check_invariants(sched, out)

    assert sched.num_preemptions_total > 10  # the tiny pool did force preemptions
    if prefix_caching:  # and shared prefixes were reused, some from blocks revived from the free queue
        assert mgr.prefix_cache_hits > 100 and mgr.block_pool.num_evictions > 10
    else:
        assert mgr.prefix_cache_hits == 0 and not mgr.block_pool.cached
    assert num_aborted > 5
    assert mgr.req_to_blocks == {} and sched.requests == {}
    assert mgr.num_free_blocks == 11 and mgr.usage == 0.0
    assert all(b.ref_cnt == 0 for b in mgr.block_pool.blocks)
    for req in all_requests:
        assert req.is_finished
        if req.status is RequestStatus.FINISHED_ABORTED:
            continue
        # Same tokens as an uninterrupted run: preemption and chunking changed nothing.
        replay = Request(req.request_id, req.prompt_token_ids, req.sampling_params)
        for _ in range(req.num_output_tokens):
            replay.output_token_ids.append(fake_token(replay))
        assert replay.output_token_ids == req.output_token_ids
        last = req.output_token_ids[-1]
        if not req.sampling_params.ignore_eos:
            assert eos not in req.output_token_ids[:-1]  # no missed stop
        if req.finish_reason == "stop":
            assert last == eos and not req.sampling_params.ignore_eos
        else:
            assert req.num_output_tokens == req.sampling_params.max_tokens


def test_scheduler_modules_import_only_the_standard_library():
    """No JAX or NumPy: the scheduler and block pool stay testable without a model or device. Each
    module of runtime/core (and the contract they take their params from, runtime/api.py) imports,
    outside ``if TYPE_CHECKING:``, only the standard library and each other."""
    root = Path(__file__).resolve().parents[3]
    own = {"runtime.api"} | {
        f"runtime.core.{p.stem}" for p in (root / "runtime" / "core").glob("*.py") if p.stem != "__init__"
    }
    assert {"runtime.core.block_pool", "runtime.core.kv_cache_manager", "runtime.core.scheduler"} <= own
    for name in sorted(own):
        tree = ast.parse((root / (name.replace(".", "/") + ".py")).read_text())
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                modules = [node.module or ""]
            for module in modules:
                top = module.split(".")[0]
                assert module in own or top in sys.stdlib_module_names, f"{name} imports {module}"


def _runtime_imports(tree: ast.AST):
    """Import statements that run: those under ``if TYPE_CHECKING:`` are for type checkers only."""
    skip = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in skip]


def test_importing_the_core_and_the_contract_loads_neither_jax_nor_numpy_nor_the_grammar_library():
    from tests.support.processes import modules_loaded_by

    core = (
        "runtime.api, runtime.core.block_pool, runtime.core.kv_cache_manager, runtime.core.kv_sizing, "
        "runtime.core.request, runtime.core.scheduler, runtime.core.stopping"
    )
    assert modules_loaded_by(core, ("jax", "numpy", "llguidance")) == []
