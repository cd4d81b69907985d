"""gateway.advise.tune on a fake replay whose goodput per candidate is written down below: the candidates a
diagnosis yields; screening, the leaders and their interleaved confirmation; the permutation test (its
exact p-values, and its false-recommendation rate on exchangeable replays, measured); "no change helps";
the search budget (counted from the first candidate, leaving room for a confirmation); the YAML fragment,
the dashboard's record and the CLI. No engine: the replay is a table lookup
(tests/gateway/test_advise_replay.py runs a real one; scripts/advisor_power.py measures the rule on real
replays)."""

from __future__ import annotations

import random

import pytest
import yaml

from gateway.advise import main
from gateway.advise.tune import (
    ALPHA,
    CONFIRM_RUNS,
    MAX_CONFIRM,
    SCREEN_RUNS,
    Candidate,
    candidates,
    cliffs_delta,
    fragment,
    last,
    last_tuning_path,
    permutation_p,
    read_last,
    save_last,
    settings_of,
    table,
    tune,
)
from runtime.api import EngineConfig

FINDINGS = [  # as symptoms.report writes them (asdict): only the proposals matter here
    {"symptom": "ttft", "proposal": {"max_num_seqs": 8}},
    {"symptom": "memory", "proposal": {"kv_dtype": "int8"}},
    {"symptom": "ttft", "proposal": {}},  # a replica: nothing one engine can replay
]
REQUESTS = 20  # one request is 0.05 of goodput: the smallest difference a replay can show


class FakeReplay:
    """Goodput and cost (and optionally TTFT p99) by candidate name, the goodput a number or a list answered
    in turn (its last value repeated); the current configuration answers ``current`` in turn the same way.
    Each call advances a clock by ``step_s``."""

    def __init__(self, goodput: dict, current=(0.5,), step_s: float = 10.0):
        self.goodput, self.current, self.step_s = goodput, list(current), step_s
        self.now, self.calls, self.seen = 0.0, [], {}

    def next(self, name: str, values) -> float:
        values = values if isinstance(values, (list, tuple)) else [values]
        i = self.seen[name] = self.seen.get(name, -1) + 1
        return values[min(i, len(values) - 1)]

    def __call__(self, change: dict) -> dict:
        self.now += self.step_s
        name = Candidate(change, "").name
        self.calls.append(name)
        if not change:
            g, cost, p99 = self.next("current", self.current), 1.0, []
        else:
            g, cost, *p99 = self.goodput[name]
            g = self.next(name, g)
        side = {"p50": 0.1, "p99": p99[0] if p99 else 0.2}
        return {"goodput": g, "cost_usd": cost, "ttft_s": side, "tpot_s": {"p50": 0.01, "p99": 0.02}} | {
            "output_tokens_per_s": 50.0,
            "requests": REQUESTS,
        }


class Counter:
    n = 0

    def update(self, n: int) -> None:
        self.n += n


def test_candidates_are_the_proposals_their_neighbours_and_the_top_two_combined():
    names = [(c.name, c.source) for c in candidates(FINDINGS)]
    assert names == [
        ("max_num_seqs=8", "finding"),
        ("kv_dtype=int8", "finding"),
        ("max_num_seqs=4", "neighbour"),  # halved
        ("max_num_seqs=16", "neighbour"),  # doubled
        ("max_num_seqs=8, kv_dtype=int8", "combined"),
    ]
    # max_num_seqs 1 halved is still 1 (the floor): listed once; a chunk of 24 halves to the floor of 16
    one = candidates([{"proposal": {"max_num_seqs": 1}}, {"proposal": {"max_num_batched_tokens": 24}}])
    assert [c.name for c in one] == [
        "max_num_seqs=1",
        "max_num_batched_tokens=24",
        "max_num_seqs=2",
        "max_num_batched_tokens=16",
        "max_num_seqs=1, max_num_batched_tokens=24",
    ]
    # the top two change the same key: not combined
    same = candidates([{"proposal": {"max_num_seqs": 8}}, {"proposal": {"max_num_seqs": 2}}])
    assert all(c.source != "combined" for c in same)
    assert candidates([]) == []


def test_a_change_to_what_the_engine_already_runs_is_not_a_candidate():
    """A finding proposed max_num_seqs=4 to an engine running 4 (seed 992542): that is the current
    configuration, replayed already; its neighbours and combinations that do change something stay."""
    current = settings_of({"model": "smollm2-135m", "max_num_seqs": 4})
    assert current["max_num_seqs"] == 4 and current["cache"] == "none"
    assert current["max_num_batched_tokens"] == EngineConfig().max_num_batched_tokens  # a default counts too
    names = [c.name for c in candidates([{"proposal": {"max_num_seqs": 4}}, {"proposal": {"cache": "none"}}], current)]
    assert names == ["max_num_seqs=2", "max_num_seqs=8"]
    chunk = EngineConfig().max_num_batched_tokens
    halved = [c.name for c in candidates([{"proposal": {"max_num_batched_tokens": chunk}}], current)]
    assert halved == [f"max_num_batched_tokens={max(16, chunk // 2)}"]  # the default itself is left out
    assert [c.name for c in candidates([{"proposal": {"max_num_seqs": 4}}])] == [
        "max_num_seqs=4",
        "max_num_seqs=2",
        "max_num_seqs=8",
    ]


GOODPUT = {  # name -> (goodput, cost)
    "max_num_seqs=8": (0.80, 2.0),
    "kv_dtype=int8": (0.60, 1.0),
    "max_num_seqs=4": (0.40, 1.0),
    "max_num_seqs=16": (0.80, 1.0),
    "max_num_seqs=8, kv_dtype=int8": (0.90, 3.0),
}


def abba(name: str, runs: int = CONFIRM_RUNS) -> list[str]:
    """The calls of one confirmation: current and the leader interleaved ABBA."""
    return [x for i in range(runs) for x in (("current", name) if i % 2 == 0 else (name, "current"))]


def test_the_rule_can_always_reach_its_level():
    """With the shipped counts, 6 + 6 replays that separate completely give p = 1/924, under alpha / 2."""
    assert (SCREEN_RUNS, CONFIRM_RUNS, MAX_CONFIRM, ALPHA) == (2, 6, 2, 0.05)
    assert permutation_p([0.5] * 6, [0.6] * 6) == pytest.approx(1 / 924) and 1 / 924 <= ALPHA / MAX_CONFIRM
    # one inversion (the current's best above every candidate run): 7 of 924 deals sum as high (the six 0.60s,
    # or the 0.65 with any five of them), p 0.008, still a recommendation
    assert permutation_p([0.5] * 5 + [0.65], [0.6] * 6) == pytest.approx(7 / 924)
    with pytest.raises(ValueError, match="cannot reach"):
        tune(FINDINGS, FakeReplay(GOODPUT), confirm_runs=3)  # 1/20 > 0.025


def test_permutation_p_and_cliffs_delta_on_hand_counted_cases():
    # two against two: C(4, 2) = 6 ways to deal; the candidate's 0.3 + 0.4 is the largest of them
    assert permutation_p([0.1, 0.2], [0.3, 0.4]) == pytest.approx(1 / 6)
    # reversed: every deal reaches the candidate's smallest sum
    assert permutation_p([0.3, 0.4], [0.1, 0.2]) == 1.0
    assert permutation_p([0.5] * 4, [0.5] * 4) == 1.0  # all tied: no evidence
    # 0.1, 0.2 | 0.2, 0.4: deals with a sum >= 0.6: {0.2,0.4} twice (either 0.2), {0.1,0.4}... 0.5 no; {0.2,0.4} x2 only
    # of {0.1, 0.2a, 0.2b, 0.4}: sums 0.3, 0.3, 0.5, 0.4, 0.6, 0.6 -> 2 of 6
    assert permutation_p([0.1, 0.2], [0.2, 0.4]) == pytest.approx(2 / 6)
    assert cliffs_delta([0.1, 0.2], [0.3, 0.4]) == 1.0 and cliffs_delta([0.3, 0.4], [0.1, 0.2]) == -1.0
    assert cliffs_delta([0.1, 0.2], [0.2, 0.4]) == pytest.approx((1 + 1 + 0 + 1) / 4)


def test_screened_then_the_leader_confirmed_by_interleaved_replays_and_recommended():
    fake, bar = FakeReplay(GOODPUT), Counter()
    t = tune(FINDINGS, fake, budget_s=1e9, clock=lambda: fake.now, progress=bar)
    screened = ["max_num_seqs=8", "kv_dtype=int8", "max_num_seqs=4", "max_num_seqs=16", "max_num_seqs=8, kv_dtype=int8"]
    # the two screening runs, each candidate once, then the best leader (0.90) against the current one, ABBA
    assert fake.calls == ["current"] * SCREEN_RUNS + screened + abba("max_num_seqs=8, kv_dtype=int8")
    assert bar.n == len(fake.calls)
    (c,) = t.confirmations  # it passed: the second leader is not confirmed
    assert c.current_runs == [0.5] * 6 and c.candidate_runs == [0.9] * 6 and c.separated and c.passed
    assert c.p_value == pytest.approx(1 / 924, abs=1e-6) and c.effect == pytest.approx(0.4) and c.delta == 1.0
    assert [r.candidate.name for r in t.rows] == [
        "max_num_seqs=8, kv_dtype=int8",  # recommended, first
        "max_num_seqs=16",  # 0.80 at cost 1
        "max_num_seqs=8",  # 0.80 at cost 2
        "kv_dtype=int8",  # 0.60
        "current",  # 0.50, its eight runs pooled
        "max_num_seqs=4",  # 0.40
    ]
    rec = t.recommended
    assert rec is t.rows[0] and rec.runs == 6 and rec.vs_current == pytest.approx(0.4) and rec.p_value == c.p_value
    assert t.baseline == 0.5 and t.current_runs == [0.5] * 8 and t.rows[4].runs == 8
    text = table(t)
    assert text.splitlines()[1].startswith("*max_num_seqs=8, kv_dtype=int8") and "+0.400" in text
    assert "confirmation of max_num_seqs=8, kv_dtype=int8: 6 + 6 interleaved replays" in text
    assert text.splitlines()[-1] == (
        "recommended: max_num_seqs=8, kv_dtype=int8 (goodput 0.500 -> 0.900 over 6 + 6 interleaved replays;"
        " one-sided permutation p = 0.001 <= 0.025; effect +0.400, Cliff's delta +1.00)"
    )


def test_a_noisy_workload_where_every_confirmation_replay_beats_every_current_one_is_recommended():
    """Seed 91731's third workload, as the issue tells it: the current configuration replays at 0.19, 0.27,
    0.15 and 0.65, a candidate at 0.81. The old bound (flips + 1) / N said 0.62 and no change; the
    confirmation's replays separate completely, p = 1/924: recommended."""
    goodput = {"max_num_seqs=8": ([0.81, 0.78, 0.74, 0.85, 0.70, 0.76, 0.79], 1.0)} | {
        n: (0.1, 1.0) for n in GOODPUT if n != "max_num_seqs=8"
    }
    fake = FakeReplay(goodput, current=(0.19, 0.27, 0.15, 0.65, 0.23, 0.31, 0.52, 0.44))
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    (c,) = t.confirmations
    assert c.current_runs == [0.15, 0.65, 0.23, 0.31, 0.52, 0.44]
    assert c.candidate_runs == [0.78, 0.74, 0.85, 0.70, 0.76, 0.79]
    assert c.separated and t.recommended.candidate.name == "max_num_seqs=8"
    assert t.recommended.goodput == pytest.approx(0.77) and t.recommended.vs_current == pytest.approx(0.77 - 2.3 / 6)


def test_a_lead_the_confirmation_does_not_bear_out_is_not_advice():
    """max_num_seqs=8 screens at 0.75 (a lucky run), then replays at 0.55-0.65 beside a current one at
    0.50-0.70: p about 0.4, not advice; the second leader (kv_dtype=int8, 0.6 once) is confirmed too and
    fails the same way. The verdict says which were tried and how close they came."""
    goodput = {n: (0.3, 1.0) for n in GOODPUT} | {
        "max_num_seqs=8": ([0.75, 0.6, 0.55, 0.65, 0.6, 0.5, 0.7], 1.0),
        "kv_dtype=int8": ([0.6, 0.5, 0.6, 0.55, 0.6, 0.65, 0.5], 1.0),
    }
    current = (0.5, 0.7) + (0.6, 0.6, 0.5, 0.7, 0.6, 0.55) * 2
    fake = FakeReplay(goodput, current=current)
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    assert [c.candidate.name for c in t.confirmations] == ["max_num_seqs=8", "kv_dtype=int8"]
    assert all(not c.passed and c.p_value > 0.2 for c in t.confirmations)
    assert t.recommended is None and t.verdict.startswith("no change helps: no confirmation beat the current")
    assert "max_num_seqs=8 p = " in t.verdict and fragment(t, "smollm2-135m") is None


def test_a_candidate_below_every_screening_run_of_the_current_one_is_not_confirmed():
    worse = {name: (0.4, 1.0) for name in GOODPUT}
    fake = FakeReplay(worse)
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    assert t.confirmations == [] and t.recommended is None and t.rows[0].candidate.name == "current"
    assert t.verdict.startswith("no change helps: no candidate's screening replay reached")
    idle = FakeReplay({})
    t = tune([], idle, clock=lambda: idle.now)  # a healthy window: nothing to try
    assert idle.calls == ["current"] * SCREEN_RUNS and [r.candidate.name for r in t.rows] == ["current"]
    assert t.recommended is None


def test_on_exchangeable_replays_the_rule_recommends_a_no_better_change_at_most_alpha_of_the_time():
    """The error rate in the direction that matters most, measured on the rule itself: 3,000 tunings whose
    every replay (current or candidate) is a draw from one distribution, so no candidate is better. The
    permutation test holds each leader to alpha / 2, so at most alpha of the tunings may recommend; the
    bound allowed is alpha plus three binomial standard deviations at n = 3,000 (0.012), from the
    mechanism, not from a run. A rule that took the best screening replay at its word would fail here."""
    n, rng = 3000, random.Random(20261207)
    outcomes = [round(0.05 * k, 2) for k in range(21)]  # goodput in steps of one request of 20

    def draw(change):
        g = min(outcomes, key=lambda x: abs(x - min(1.0, max(0.0, rng.gauss(0.5, 0.15)))))
        return {
            "goodput": g,
            "cost_usd": 0.0,
            "ttft_s": {"p50": 0.1, "p99": 0.2},
            "tpot_s": {"p50": 0.01, "p99": 0.02},
        } | {"output_tokens_per_s": 1.0}

    false = sum(tune(FINDINGS, draw, budget_s=1e12, clock=lambda: 0.0).recommended is not None for _ in range(n))
    assert false / n <= ALPHA + 3 * (ALPHA * (1 - ALPHA) / n) ** 0.5, false
    # and a greedy rule (recommend the best screening replay above the mean of the current ones) is often wrong
    greedy = 0
    for _ in range(300):
        cur = [draw({})["goodput"] for _ in range(2)]
        best = max(draw({})["goodput"] for _ in range(5))
        greedy += best > sum(cur) / 2
    assert greedy / 300 > 0.5


def test_the_budget_counts_the_candidates_search_and_leaves_room_for_a_confirmation():
    """10 s a replay, 155 s of budget: a confirmation costs 120 s. Candidates are screened while the search
    plus 120 s fits (started at 0, 10, 20 and 30 s of it: four), the fifth is not replayed; the best leader is
    confirmed, and a second leader only while its confirmation would still fit (it would not)."""
    goodput = {**GOODPUT, "max_num_seqs=16": (0.55, 1.0), "max_num_seqs=8": (0.5, 2.0)}
    fake = FakeReplay(goodput, current=(0.5, 0.5, 0.6, 0.55, 0.5, 0.6, 0.5, 0.55, 0.6, 0.5))
    t = tune(FINDINGS, fake, budget_s=155.0, clock=lambda: fake.now)
    first = ["max_num_seqs=8", "kv_dtype=int8", "max_num_seqs=4", "max_num_seqs=16"]
    assert fake.calls[: SCREEN_RUNS + 4] == ["current"] * SCREEN_RUNS + first
    assert [c.name for c in t.not_replayed] == ["max_num_seqs=8, kv_dtype=int8"]
    assert [c.candidate.name for c in t.confirmations] == ["kv_dtype=int8"]  # 0.60 led; not borne out
    assert [c.name for c in t.not_confirmed] == ["max_num_seqs=16"]
    assert "not replayed: the search budget ran out" in table(t) and "not confirmed" in table(t)
    # no budget at all: nothing was tried, and it does not say "no change helps"
    t = tune(FINDINGS, FakeReplay(GOODPUT), budget_s=0.0, clock=lambda: 0.0)
    assert t.recommended is None and len(t.not_replayed) == 5
    assert t.verdict.startswith("not judged: the search budget ran out before any of 5 candidates was replayed")
    # a tiny budget still screens the first candidate and confirms it when it leads
    slow = FakeReplay(GOODPUT, step_s=40.0)
    t = tune(FINDINGS, slow, budget_s=60.0, clock=lambda: slow.now)
    assert slow.calls == ["current"] * SCREEN_RUNS + ["max_num_seqs=8"] + abba("max_num_seqs=8")
    assert t.recommended.candidate.name == "max_num_seqs=8" and len(t.not_replayed) == 4


def test_the_winning_change_as_a_yaml_fragment():
    goodput = {**GOODPUT, "max_num_seqs=8, kv_dtype=int8": (0.2, 1.0), "max_num_seqs=16": (0.95, 1.0)}
    fake = FakeReplay(goodput)
    text = fragment(tune(FINDINGS, fake, clock=lambda: fake.now), "smollm2-135m", "shapes.jsonl")
    assert text.startswith("# python -m gateway.advise --tune on shapes.jsonl: max_num_seqs=16\n")
    assert "# goodput 0.500 -> 0.950 (p = 0.001, 6 + 6 replays)" in text
    assert yaml.safe_load(text) == {"models": [{"name": "smollm2-135m", "engine": {"max_num_seqs": 16}}]}
    findings = [{"proposal": {"kv_cache_bytes": 128 << 20}}, {"proposal": {"cache": "exact"}}]
    fake = FakeReplay(
        {"kv_cache_bytes=134217728": (0.6, 1.0), "cache=exact": (0.7, 0.5)}
        | {"kv_cache_bytes=134217728, cache=exact": (0.9, 0.5)}
    )
    doc = yaml.safe_load(fragment(tune(findings, fake, clock=lambda: fake.now), "m"))
    assert doc == {"models": [{"name": "m", "engine": {"kv_cache_mb": 128}}], "cache": {"enabled": True}}


def test_tune_needs_a_recording(capsys):
    assert main(["--tune", "--url", "http://127.0.0.1:9"]) == 2
    assert "--tune needs --recording" in capsys.readouterr().err


def test_the_command_line_prints_the_table_and_writes_the_change(tmp_path, monkeypatch, capsys):
    """``--tune`` end to end with the window's diagnosis and the replay stubbed: max_num_seqs 2 now (0.5),
    the finding's 8 replays at 0.8, its neighbours 4 and 16 at 0.6 and 0.7."""
    from gateway.advise import cli
    from gateway.advise.replay import Replayer

    body = {"window_s": 1800.0, "requests": 40, "findings": [{"symptom": "ttft", "proposal": {"max_num_seqs": 8}}]}
    monkeypatch.setattr(cli, "fetch", lambda args: body)
    seen = []

    def run(self, keys, *, tier_sets_model=True):
        seen.append(keys)
        side = {"p50": 0.1, "p99": 0.2}
        g = {2: 0.5, 8: 0.8, 4: 0.6, 16: 0.7}[keys["max_num_seqs"]]
        return {"goodput": g, "cost_usd": 0.0, "ttft_s": side, "tpot_s": side, "output_tokens_per_s": 9.0} | {
            "requests": REQUESTS
        }

    monkeypatch.setattr(Replayer, "run", run)
    monkeypatch.setenv("JAXSERVE_STATE_DIR", str(tmp_path / "state"))
    rec, out = tmp_path / "shapes.jsonl", tmp_path / "tuned.yaml"
    rec.write_text('{"t": 0.0, "tier": "small", "prompt_tokens": 30, "output_tokens": 4, "cache": "miss"}\n')
    argv = ["--tune", "--recording", str(rec), "--window", "30m", "--base", "max_num_seqs=2", "--out", str(out)]
    assert main(argv + ["--model", "smollm2-135m", "--alpha", "0.0001"]) == 2  # a level 6 + 6 replays cannot reach
    assert "--alpha 0.0001" in capsys.readouterr().err and seen == []
    assert main(argv + ["--model", "smollm2-135m"]) == 0
    text = capsys.readouterr().out
    assert "*max_num_seqs=8" in text and "recommended: max_num_seqs=8 (goodput 0.500 -> 0.800" in text
    order = [k["max_num_seqs"] for k in seen]
    assert order == [2] * SCREEN_RUNS + [8, 4, 16] + [2, 8, 8, 2] * 3
    assert all(k["model"] == "smollm2-135m" for k in seen)
    assert yaml.safe_load(out.read_text()) == {"models": [{"name": "smollm2-135m", "engine": {"max_num_seqs": 8}}]}
    # the result where the dashboard's Diagnosis panel reads it (GET /dashboard/tuning)
    saved = read_last(tmp_path / "state" / "advisor" / "last_tuning.json")
    assert saved["recommended"] == "max_num_seqs=8" and saved["recording"] == str(rec)
    assert [(r["candidate"], r["goodput"], r["recommended"]) for r in saved["rows"]] == [
        ("max_num_seqs=8", 0.8, True),
        ("max_num_seqs=16", 0.7, False),
        ("max_num_seqs=4", 0.6, False),
        ("current", 0.5, False),
    ]
    assert saved["verdict"].startswith("recommended: max_num_seqs=8") and saved["fragment"].startswith("# python")
    (c,) = saved["confirmations"]
    assert c["candidate"] == "max_num_seqs=8" and c["passed"] and c["candidate_runs"] == [0.8] * 6


def test_the_last_result_is_none_until_written_and_whole_after(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXSERVE_STATE_DIR", str(tmp_path))
    assert last_tuning_path() == tmp_path / "advisor" / "last_tuning.json" and read_last() is None
    fake = FakeReplay(GOODPUT)
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    save_last(last(t, recording="r.jsonl", finished_at=12.0))
    body = read_last()
    assert body["finished_at"] == 12.0 and body["alpha"] == ALPHA and len(body["rows"]) == 6
    assert body["rows"][0]["ttft_p99_s"] == pytest.approx(0.2) and body["rows"][0]["vs_current"] == 0.4
    assert body["rows"][0]["p_value"] == pytest.approx(1 / 924, abs=1e-6) and body["rows"][0]["runs"] == 6
    last_tuning_path().write_text("{half")
    assert read_last() is None  # unreadable: as if none


def test_a_confirmation_is_priced_at_the_replays_own_time_not_the_engine_builds():
    """A real replay reports ``wall_s`` (its run, without the engine build a new configuration pays once).
    Here every candidate costs 60 s of clock (a 50 s build and a 10 s run) and a confirmation 12 runs of
    10 s: with 360 s of budget all five candidates are screened (started at 0, 60, ..., 240 s of the
    search, each leaving room for 120 s of confirmation), where pricing a confirmation from the clock (12 x
    the mean of 10, 10 and 60 s: 320 s) would have stopped after the first."""

    class Built(FakeReplay):
        def __call__(self, change):
            row = super().__call__(change)
            self.now += 50.0 if change else 0.0  # a build for a candidate, on top of the 10 s run
            return row | {"wall_s": 10.0}

    fake = Built(GOODPUT)
    t = tune(FINDINGS, fake, budget_s=360.0, clock=lambda: fake.now)
    assert t.not_replayed == [] and len([r for r in t.rows if r.candidate.source != "current"]) == 5


def test_without_a_leader_screening_may_use_the_whole_budget():
    """Every candidate screens below the current configuration: nothing will need confirming, so no room is
    kept for it. 10 s a replay, 50 s of budget: all five are screened (started at 0-40 s), where keeping
    120 s for a confirmation would have stopped after the first."""
    fake = FakeReplay({name: (0.4, 1.0) for name in GOODPUT})
    t = tune(FINDINGS, fake, budget_s=50.0, clock=lambda: fake.now)
    assert t.not_replayed == [] and t.confirmations == [] and len(fake.calls) == SCREEN_RUNS + 5
