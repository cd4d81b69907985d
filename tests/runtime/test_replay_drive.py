"""runtime.replay.drive on a fake engine (no model, no JAX): requests are added when their arrival time
comes, ``admit`` sees the ids finished so far and can keep a request from the engine, each served request
gets its first-token and finish times and its token count, and the engine's counters are differenced over
the run. (tests/gateway/test_advise_replay.py drives the real tiny model.)"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.api import EngineStats
from runtime.replay import Arrival, drive


@dataclass
class Out:
    request_id: str
    token_ids: list[int]
    finished: bool


class FakeEngine:
    """One token per running request per step; a request finishes after ``max_tokens`` tokens. The
    counters start non-zero (an engine used before), and each step adds one preemption, 10 prefix-cache
    queries and 4 hits; KV usage is 0.1 per running request."""

    def __init__(self):
        self.running: dict[str, list] = {}  # id -> [tokens left, SamplingParams]
        self.added: list[tuple[str, int, bool]] = []
        self.preempt, self.queries, self.hits = 5, 100, 30

    def add_request(self, prompt_ids, params, request_id):
        self.added.append((request_id, len(prompt_ids), params.ignore_eos))
        self.running[request_id] = [params.max_tokens, params]

    def has_unfinished_requests(self) -> bool:
        return bool(self.running)

    def stats(self) -> EngineStats:
        usage = 0.1 * len(self.running)
        return EngineStats(
            num_running=len(self.running),
            num_waiting=0,
            kv_cache_usage=usage,
            num_preemptions_total=self.preempt,
            num_steps=0,
            num_blocks=10,
            prefix_cache_queries=self.queries,
            prefix_cache_hits=self.hits,
        )

    def step(self):
        out = []
        for rid in list(self.running):
            self.running[rid][0] -= 1
            done = self.running[rid][0] == 0
            out.append(Out(rid, [7], done))
            if done:
                del self.running[rid]
        self.preempt, self.queries, self.hits = self.preempt + 1, self.queries + 10, self.hits + 4
        return out


def test_each_request_is_timed_and_the_counters_are_differenced():
    engine = FakeEngine()
    arrivals = [Arrival(0.0, "a", [1] * 5, 3), Arrival(0.0, "b", [1] * 8, 2), Arrival(0.05, "c", [1] * 2, 1)]
    run = drive(engine, arrivals)
    assert engine.added == [("a", 5, True), ("b", 8, True), ("c", 2, True)]  # ignore_eos: exactly max_tokens
    assert {r: t.tokens for r, t in run.timings.items()} == {"a": 3, "b": 2, "c": 1}
    for t in run.timings.values():
        assert t.arrival <= t.first <= t.done
    assert run.timings["c"].arrival - run.timings["a"].arrival >= 0.05  # added when its time came
    # a and b: 3 steps together (b done after 2); c alone later: 4 steps in all
    assert run.preemptions == 4 and run.prefix_cache_hit_rate == 16 / 40
    assert run.peak_kv_usage == 0.2 and run.wall_s >= 0.05


def test_admit_sees_the_finished_ids_and_keeps_a_request_from_the_engine():
    engine, seen = FakeEngine(), []

    def admit(a: Arrival, finished: set[str]) -> bool:
        seen.append((a.request_id, sorted(finished)))
        return a.request_id != "again"  # a cache would answer it

    arrivals = [Arrival(0.0, "first", [1], 1), Arrival(0.05, "again", [1], 1), Arrival(0.06, "new", [1], 2)]
    run = drive(engine, arrivals, admit=admit)
    assert seen == [("first", []), ("again", ["first"]), ("new", ["first"])]
    assert sorted(run.timings) == ["first", "new"] and [x[0] for x in engine.added] == ["first", "new"]
