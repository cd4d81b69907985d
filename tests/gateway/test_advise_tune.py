"""gateway.advise.tune on a fake replay whose goodput per candidate is written down below: the candidates a
diagnosis yields, the ranking (goodput; within the noise, p99 and then cost), the noise rule (a gain within
the replay's own noise is not advice) and how the noise is bounded from the requests that changed sides,
"no change helps", the search budget (counted from the first candidate), the YAML fragment, and the CLI's
refusal without a recording. No engine: the replay is a table lookup (tests/gateway/test_advise_replay.py
runs a real one)."""

from __future__ import annotations

import yaml

from gateway.advise import main
from gateway.advise.tune import (
    NOISE_RUNS,
    Candidate,
    candidates,
    fragment,
    last,
    last_tuning_path,
    noise_of,
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
    """Goodput and cost (and optionally TTFT p99) by candidate name; the current configuration answers
    ``current`` in turn (its noise runs, then the closing run). Each call advances a clock by ``step_s``."""

    def __init__(self, goodput: dict, current=(0.5,) * 4, step_s: float = 10.0):
        self.goodput, self.current, self.step_s = goodput, list(current), step_s
        self.now, self.calls = 0.0, []

    def __call__(self, change: dict) -> dict:
        self.now += self.step_s
        name = Candidate(change, "").name
        self.calls.append(name)
        g, cost, *p99 = (self.current.pop(0), 1.0) if not change else self.goodput[name]
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
    "max_num_seqs=16": (0.80, 1.0),  # as good as max_num_seqs=8, and cheaper: ranked above it
    "max_num_seqs=8, kv_dtype=int8": (0.90, 3.0),
}


def test_ranked_by_goodput_then_cost_and_the_best_recommended():
    fake, bar = FakeReplay(GOODPUT), Counter()
    t = tune(FINDINGS, fake, budget_s=1e9, clock=lambda: fake.now, progress=bar)
    assert fake.calls[:NOISE_RUNS] == ["current"] * NOISE_RUNS and len(fake.calls) == NOISE_RUNS + 6
    assert fake.calls[-1] == "current" and bar.n == NOISE_RUNS + 6  # the closing run after the candidates
    assert [r.candidate.name for r in t.rows] == [
        "max_num_seqs=8, kv_dtype=int8",  # 0.90
        "max_num_seqs=16",  # 0.80 at cost 1
        "max_num_seqs=8",  # 0.80 at cost 2
        "kv_dtype=int8",  # 0.60
        "current",  # 0.50
        "max_num_seqs=4",  # 0.40
    ]
    # the current runs all agree: no request changed sides, the noise is the one unseen flip, one request
    assert t.baseline == 0.5 and t.noise == 0.05 and t.flips == 0 and t.current_runs == [0.5] * (NOISE_RUNS + 1)
    assert t.recommended is t.rows[0] and t.rows[0].vs_current == 0.4 and t.rows[-1].vs_current == -0.1
    assert t.not_replayed == [] and t.elapsed_s == 10.0 * (NOISE_RUNS + 6) and t.search_s == 50.0
    text = table(t)
    assert text.splitlines()[1].startswith("*max_num_seqs=8, kv_dtype=int8") and "+0.400" in text
    assert text.splitlines()[-1] == "recommended: max_num_seqs=8, kv_dtype=int8 (goodput 0.500 -> 0.900, noise 0.050)"


def test_a_gain_within_the_replays_own_noise_is_not_advice():
    """The current configuration replays at 0.50, 0.70, 0.60 and (closing) 0.60: baseline 0.60; the spread is at least 4
    requests changing sides, plus one unseen: noise 0.25. The best candidate's 0.75 beats the baseline by
    0.15, within the noise: no change helps. At 0.90 it helps."""
    close = {name: (0.75 if name == "max_num_seqs=8" else 0.3, 1.0) for name in GOODPUT}
    fake = FakeReplay(close, current=(0.5, 0.7, 0.6, 0.6))
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    assert (t.baseline, t.noise, t.flips) == (0.6, 0.25, 4) and t.rows[0].candidate.name == "max_num_seqs=8"
    assert t.recommended is None and t.verdict.startswith("no change helps")
    assert fragment(t, "smollm2-135m") is None  # nothing to write
    far = FakeReplay({**close, "max_num_seqs=8": (0.9, 1.0)}, current=(0.5, 0.7, 0.6, 0.6))
    assert tune(FINDINGS, far, clock=lambda: far.now).recommended.candidate.name == "max_num_seqs=8"


def test_the_noise_counts_the_requests_that_changed_sides_not_only_the_goodputs():
    """Three runs at the same goodput (2 of 4 requests within the levels) but different requests within:
    requests 0-2 changed sides, so a later run can differ by as many; the goodputs alone would say none."""
    runs = [
        {"goodput": 0.5, "requests": 4, "within": [True, True, False, False]},
        {"goodput": 0.5, "requests": 4, "within": [True, False, True, False]},
        {"goodput": 0.5, "requests": 4, "within": [False, True, True, False]},
    ]
    assert noise_of(runs) == (1.0, 3)  # (3 flips + 1 unseen) / 4
    assert noise_of(runs[:1] * 3) == (0.25, 0)  # identical runs: one request's share
    # without per-request sides: the fewest flips that explain the spread (0.25 to 0.75 of 4: 2)
    assert noise_of([{"goodput": 0.25, "requests": 4}, {"goodput": 0.75, "requests": 4}]) == (0.75, 2)


def test_drift_over_the_search_widens_the_noise():
    """Three current runs at 0.50 back to back, a candidate at 0.80, then the closing current run at 0.80:
    the machine got faster while the candidates replayed. Counted over all four runs the noise is 6 flips
    + 1 = 0.35 and the baseline 0.575, so the candidate's 0.80 is no advice; from the first three alone
    (noise 0.05) it would have been."""
    fake = FakeReplay({name: (0.8 if name == "max_num_seqs=8" else 0.2, 1.0) for name in GOODPUT}, (0.5,) * 3 + (0.8,))
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    assert t.current_runs == [0.5, 0.5, 0.5, 0.8] and (t.baseline, t.noise, t.flips) == (0.575, 0.35, 6)
    assert t.recommended is None


def test_goodputs_within_the_noise_are_ranked_by_p99_then_cost():
    """max_num_seqs=8 at 0.80 with TTFT p99 5 s (five times its level) and max_num_seqs=16 at 0.78 with 0.5 s:
    within the noise (0.05) of each other and both beyond it from the current 0.50, so the faster one is
    recommended. kv_dtype=int8 at 0.74 is as fast, and within the noise of max_num_seqs=16, but a group is
    anchored on its best (0.80): 0.74 is outside it, ranked after."""
    goodput = {
        "max_num_seqs=8": (0.80, 1.0, 5.0),
        "max_num_seqs=16": (0.78, 2.0, 0.5),
        "kv_dtype=int8": (0.74, 0.5, 0.5),
        "max_num_seqs=4": (0.2, 1.0),
        "max_num_seqs=8, kv_dtype=int8": (0.2, 1.0),
    }
    fake = FakeReplay(goodput)
    t = tune(FINDINGS, fake, clock=lambda: fake.now, slo=(1.0, 0.1))
    assert [r.candidate.name for r in t.rows[:3]] == ["max_num_seqs=16", "max_num_seqs=8", "kv_dtype=int8"]
    assert t.recommended.candidate.name == "max_num_seqs=16"
    # a faster candidate within the noise of the best that does not itself beat the current one is not advice
    near = {**goodput, "max_num_seqs=16": (0.56, 0.1, 0.1), "kv_dtype=int8": (0.2, 1.0)}
    near = FakeReplay(near, current=(0.5, 0.55, 0.55, 0.55))
    t = tune(FINDINGS, near, clock=lambda: near.now, slo=(1.0, 0.1))  # baseline 0.54, noise 0.10
    assert t.noise == 0.1 and t.recommended.candidate.name == "max_num_seqs=8"


def test_no_change_helps_when_every_candidate_is_worse_or_there_are_none():
    worse = {name: (0.4, 1.0) for name in GOODPUT}
    fake = FakeReplay(worse)
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    assert t.recommended is None and t.rows[0].candidate.name == "current"
    idle = FakeReplay({})
    t = tune([], idle, clock=lambda: idle.now)  # a healthy window: nothing to try
    assert idle.calls == ["current"] * NOISE_RUNS and [r.candidate.name for r in t.rows] == ["current"]
    assert t.recommended is None


def test_the_budget_counts_the_candidates_search_and_lists_what_was_not_replayed():
    """10 s a replay, 35 s of budget: the current configuration's noise runs first, outside the budget;
    then candidates while the search is under 35 s (started at 0, 10, 20 and 30 s of it): four replayed,
    one not."""
    fake = FakeReplay(GOODPUT)
    t = tune(FINDINGS, fake, budget_s=35.0, clock=lambda: fake.now)
    assert fake.calls == ["current"] * NOISE_RUNS + ["max_num_seqs=8", "kv_dtype=int8", "max_num_seqs=4"] + [
        "max_num_seqs=16",
        "current",
    ]
    assert [c.name for c in t.not_replayed] == ["max_num_seqs=8, kv_dtype=int8"]
    assert t.recommended.candidate.name == "max_num_seqs=16"  # the best of what was replayed, cheaper than 8
    assert "not replayed: the search budget ran out" in table(t)
    # a slow machine's noise runs (40 s each, more than the budget together) leave the candidates' search whole
    slow = FakeReplay(GOODPUT, step_s=40.0)
    t = tune(FINDINGS, slow, budget_s=60.0, clock=lambda: slow.now)
    assert slow.calls == ["current"] * NOISE_RUNS + ["max_num_seqs=8", "kv_dtype=int8", "current"]
    assert len(t.not_replayed) == 3
    # no budget at all: nothing was tried, and it does not say "no change helps"
    t = tune(FINDINGS, FakeReplay(GOODPUT), budget_s=0.0, clock=lambda: 0.0)
    assert t.recommended is None and len(t.not_replayed) == 5
    assert t.verdict.startswith("not judged: the search budget ran out before any of 5 candidates was replayed")


def test_the_winning_change_as_a_yaml_fragment():
    goodput = {**GOODPUT, "max_num_seqs=8, kv_dtype=int8": (0.2, 1.0), "max_num_seqs=16": (0.95, 1.0)}
    fake = FakeReplay(goodput)
    text = fragment(tune(FINDINGS, fake, clock=lambda: fake.now), "smollm2-135m", "shapes.jsonl")
    assert text.startswith("# python -m gateway.advise --tune on shapes.jsonl: max_num_seqs=16\n")
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
    assert main(argv + ["--model", "smollm2-135m"]) == 0
    text = capsys.readouterr().out
    assert "*max_num_seqs=8" in text and "recommended: max_num_seqs=8 (goodput 0.500 -> 0.800" in text
    assert [k["max_num_seqs"] for k in seen] == [2] * NOISE_RUNS + [8, 4, 16, 2] and all(
        k["model"] == "smollm2-135m" for k in seen
    )
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


def test_the_last_result_is_none_until_written_and_whole_after(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXSERVE_STATE_DIR", str(tmp_path))
    assert last_tuning_path() == tmp_path / "advisor" / "last_tuning.json" and read_last() is None
    fake = FakeReplay(GOODPUT)
    t = tune(FINDINGS, fake, clock=lambda: fake.now)
    save_last(last(t, recording="r.jsonl", finished_at=12.0))
    body = read_last()
    assert body["finished_at"] == 12.0 and body["noise"] == 0.05 and len(body["rows"]) == 6
    assert body["rows"][0]["ttft_p99_s"] == 0.2 and body["rows"][0]["vs_current"] == 0.4
    last_tuning_path().write_text("{half")
    assert read_last() is None  # unreadable: as if none
