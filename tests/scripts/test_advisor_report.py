"""scripts/advisor_report.py without its engines: the seed draws the deployment and the workloads (the same
ones for the same seed, others for another, every kind and both sides of each share over a few seeds);
the report replays at the advisor's own service levels; ``judge`` says when a recommendation breaks the
issue's rule and when a third replay falls outside the reported noise (each check is shown failing on a
hand-made tuning, not only passing); the tuner runs on a fake replay whose goodputs are written below.
(The runs on real seeds are docs/ADVISOR.md.)"""

from __future__ import annotations

import json

import pytest

from gateway.advise import symptoms
from gateway.advise.tune import Candidate, Row, Tuning
from tests.support.scripts import load_script

report = load_script("advisor_report")


def test_a_seed_draws_the_same_engine_and_workloads_and_another_seed_others():
    engine, ws = report.draw(7, 3)
    again_engine, again = report.draw(7, 3)
    assert engine == again_engine and [w.requests for w in ws] == [w.requests for w in again]
    assert [w.requests for w in report.draw(8, 3)[1]] != [w.requests for w in ws]
    assert [w.name for w in ws] == ["s7-w0", "s7-w1", "s7-w2"]


def test_drawn_workloads_vary_and_each_is_big_enough_to_diagnose_and_fits_the_context():
    drawn = [w for seed in range(12) for w in report.draw(seed, 3)[1]]
    assert {w.kind for w in drawn} == set(report.KINDS)
    for share in ("shared_prefix_share", "repeat_share", "large_tier_share"):
        values = {w.params[share] for w in drawn}
        assert 0.0 in values and any(v > 0 for v in values), share  # sometimes none, sometimes some
    assert len({w.params["question_words_mean"] for w in drawn}) > 1
    assert any(len({json.dumps(r.messages) for r in w.requests}) < len(w.requests) for w in drawn)  # repeats
    for w in drawn:
        assert len(w.requests) >= symptoms.MIN_REQUESTS + 2, w.name
        ts = [r.t for r in w.requests]
        assert ts == sorted(ts) and ts[0] >= 0
        lo, hi = w.params["answer_tokens"]
        for r in w.requests:
            assert lo <= r.max_tokens <= hi and r.tier in ("small", "large")
            n_words = sum(len(m["content"].split()) for m in r.messages)
            assert 1.3 * n_words + 40 + r.max_tokens < report.MAX_MODEL_LEN, (w.name, n_words)


def test_the_report_replays_at_the_advisors_default_service_levels(monkeypatch):
    assert (report.TTFT_SLO, report.TPOT_SLO) == (symptoms.TTFT_SLO, symptoms.TPOT_SLO) == (1.0, 0.1)
    made = []

    class Replayer:  # stands in for gateway.advise.replay.Replayer: records how the report builds it
        def __init__(self, shapes, ttft_slo, tpot_slo, **kw):
            made.append((ttft_slo, tpot_slo))

        def run(self, keys, tier_sets_model=True):
            return row(0.5)

    monkeypatch.setattr("gateway.advise.replay.Replayer", Replayer)
    report.tune_workload([], {"findings": []}, {"model": "m"}, budget_s=10)
    assert made == [(symptoms.TTFT_SLO, symptoms.TPOT_SLO)]
    report.tune_workload([], {"findings": []}, {"model": "m"}, budget_s=10, slo=(20.0, 0.4))  # --ttft/--tpot-slo
    assert made[-1] == (20.0, 0.4)
    assert report.main(["--seed", "1", "--tpot-slo", "0"]) == 2


def test_replay_keys_are_the_gateways_engine_keys():
    assert report.replay_keys({"kv_cache_mb": 64, "max_num_seqs": 4}) == {
        "model": report.MODEL,
        "kv_cache_bytes": 64 << 20,
        "max_num_seqs": 4,
    }


# ---------------------------------------------------------------- judge and the tuner on a fake replay


def row(goodput: float, ttft: float = 0.5, tpot: float = 0.05, requests: int = 20) -> dict:
    return {
        "goodput": goodput,
        "ttft_s": {"p50": ttft, "p99": 2 * ttft},
        "tpot_s": {"p50": tpot, "p99": 2 * tpot},
        "output_tokens_per_s": 10.0,
        "cost_usd": 0.001,
        "requests": requests,
    }


class FakeReplayer:
    """Goodput by ``max_num_seqs``; any other value (the base's, or none) is the current configuration,
    whose runs answer ``current`` in turn."""

    def __init__(self, by_seqs: dict, current: list[float]):
        self.by_seqs, self.current, self.keys = by_seqs, list(current), []

    def run(self, keys: dict, tier_sets_model: bool = True) -> dict:
        self.keys.append(keys)
        seqs = keys.get("max_num_seqs")
        if seqs not in self.by_seqs:
            return row(self.current.pop(0))
        return row(self.by_seqs[seqs], ttft=0.1, tpot=0.02)


DIAGNOSIS = {"findings": [{"symptom": "ttft", "cause": "queueing", "key": "k", "proposal": {"max_num_seqs": 8}}]}


def test_a_candidate_beyond_the_noise_is_recommended_and_its_goodput_is_the_after():
    # current 0.50 and 0.55 (noise 0.05); max_num_seqs 8 -> 0.80, its neighbours 4 -> 0.60 and 16 -> 0.75
    fake = FakeReplayer({8: 0.8, 4: 0.6, 16: 0.75}, [0.5, 0.5, 0.55])  # the noise check's run first
    out = report.tune_workload([], DIAGNOSIS, {"model": "m", "max_num_seqs": 2}, budget_s=100, replayer=fake)
    assert out["recommended"] == {"max_num_seqs": 8}
    assert out["goodput_before"] == pytest.approx(0.525) and out["goodput_after"] == 0.8
    assert out["goodput_rose"] and out["some_candidate_helps"] and out["recommendation_ok"]
    assert out["latency_before"]["ttft_p50_s"] == 0.5 and out["latency_after"]["ttft_p50_s"] == 0.1
    assert out["current_runs"] == [0.5, 0.55, 0.5] and out["noise_ok"]  # the tuner's two, then the extra one
    assert [k.get("max_num_seqs") for k in fake.keys] == [2, 2, 2, 8, 4, 16]  # the base's own value for current


def test_no_candidate_beyond_the_noise_is_no_change_and_a_third_run_outside_it_is_reported():
    # current 0.50 and 0.60 (noise 0.10); the best candidate 0.60 is within it; the third run 0.75 is not
    fake = FakeReplayer({8: 0.6, 4: 0.55, 16: 0.3}, [0.75, 0.5, 0.6])
    out = report.tune_workload([], DIAGNOSIS, {"model": "m"}, budget_s=100, replayer=fake)
    assert out["recommended"] is None and not out["some_candidate_helps"] and out["recommendation_ok"]
    assert out["goodput_after"] == out["goodput_before"] == pytest.approx(0.55) and not out["goodput_rose"]
    assert out["best_candidate"] == {"change": {"max_num_seqs": 8}, "goodput": 0.6}
    assert not out["noise_ok"]


def tuning(recommended: str | None, *, baseline=0.5, noise=0.05) -> Tuning:
    """A hand-made tuning: the current configuration and two candidates, 0.9 and 0.7."""
    cur = Row(Candidate({}, "current"), 0.5, 0.5, 1.0, 0.05, 0.1, 10.0, 0.001, 0.0)
    a = Row(Candidate({"max_num_seqs": 8}, "finding"), 0.9, 0.1, 0.2, 0.02, 0.04, 10.0, 0.001, 0.4)
    b = Row(Candidate({"max_num_seqs": 4}, "neighbour"), 0.7, 0.2, 0.4, 0.02, 0.04, 10.0, 0.001, 0.2)
    pick = {"a": a, "b": b, None: None}[recommended]
    return Tuning(baseline, noise, [a, b, cur], pick)


def test_judge_fails_a_recommendation_that_breaks_the_rule():
    runs, third = [row(0.5), row(0.5)], row(0.5)
    assert report.judge(tuning("a"), runs, third)["recommendation_ok"]
    # a candidate 0.2 short of the best (noise 0.05) recommended, or none while 0.9 beats 0.5: both fail
    assert not report.judge(tuning("b"), runs, third)["recommendation_ok"]
    assert not report.judge(tuning(None), runs, third)["recommendation_ok"]
    # the best within the noise of current: recommending anything fails, no change passes
    assert report.judge(tuning(None, baseline=0.88), runs, third)["recommendation_ok"]
    assert not report.judge(tuning("a", baseline=0.88), runs, third)["recommendation_ok"]
    assert not report.judge(tuning("a"), runs, row(0.6))["noise_ok"]  # 0.1 from both runs, noise 0.05


def test_the_markdown_table_says_where_goodput_did_not_rise(tmp_path):
    fake = FakeReplayer({8: 0.6, 4: 0.55, 16: 0.3}, [0.55, 0.5, 0.6])
    body = {"workload": "s1-w0", "kind": "burst", "top_finding": {"symptom": "ttft", "cause": "queueing"}}
    body |= report.tune_workload([], DIAGNOSIS, {"model": "m"}, budget_s=100, replayer=fake)
    result = {"seed": 1, "engine": {"max_num_seqs": 2}, "rows": [body]}
    text = report.markdown(result)
    assert "| s1-w0 (burst) | [ttft] queueing | no change | 0.55 -> 0.55 (0.10) |" in text
    assert "| **no** | max_num_seqs=8 0.60 (3 of 3) | yes | yes (0.50, 0.60, 0.55) |" in text
    # a budget the current runs used up: nothing was tried, and the check says so instead of "yes"
    cut = FakeReplayer({}, [0.5, 0.5, 0.5])
    body2 = {**body, "workload": "s1-w1"} | report.tune_workload(
        [], DIAGNOSIS, {"model": "m"}, budget_s=0, replayer=cut
    )
    assert "| none replayed (0 of 3) | not judged |" in report.markdown({**result, "rows": [body2]})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result))
    assert report.main(["--seed", "1", "--markdown", str(path)]) == 0
    assert report.main(["--seed", "1", "--workloads", "0"]) == 2
