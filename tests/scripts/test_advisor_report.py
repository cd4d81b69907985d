"""scripts/advisor_report.py without its engines: the seed draws the deployment and the workloads (the same
ones for the same seed, others for another, every kind and both sides of each share over a few seeds);
the service levels are calibrated from a first replay at quantiles the seed draws (or fixed by the flags);
``judge`` says when a recommendation breaks the issue's rule (a leader whose confirmation replays all beat
the current configuration's and is not recommended; shown failing on a hand-made tuning, not only
passing); the tuner runs on a fake replay whose goodputs are written below. (The runs on real seeds are docs/ADVISOR.md.)"""

from __future__ import annotations

import json

import pytest

from gateway.advise import symptoms
from gateway.advise.tune import SCREEN_RUNS, Candidate, Confirmation, Row, Tuning
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


def test_the_levels_are_calibrated_from_a_first_replay_at_the_seeds_quantiles_or_fixed(monkeypatch):
    made, seen, asked = [], [], []

    class Replayer:  # stands in for gateway.advise.replay.Replayer: records how the report builds and runs it
        def __init__(self, shapes, ttft_slo, tpot_slo, **kw):
            made.append((ttft_slo, tpot_slo))

        def run(self, keys, tier_sets_model=True, slo=None):
            seen.append(slo)
            return row(0.5)  # TTFTs 0.1 .. 1.0 s, TPOTs 10 .. 100 ms

    def diagnose(levels):
        asked.append(levels)
        return {"findings": []}

    monkeypatch.setattr("gateway.advise.replay.Replayer", Replayer)
    out = report.tune_workload([], diagnose, {"model": "m"}, budget_s=10, quantiles=(0.5, 0.85))
    # the calibration run at the replayer's own levels, then every run and the diagnosis at the calibrated ones:
    # TTFT at 0.5 of 0.1 .. 1.0 is the 6th (0.6 s), TPOT at 0.85 the 9th (90 ms)
    assert out["slo"] == {"ttft_p99_s": 0.6, "tpot_p99_s": 0.09} and asked == [(0.6, 0.09)]
    assert seen == [None] + [(0.6, 0.09)] * SCREEN_RUNS
    assert out["calibration"]["quantiles"] == [0.5, 0.85]
    seen.clear()
    out = report.tune_workload([], {"findings": []}, {"model": "m"}, budget_s=10, slo=(20.0, 0.4))  # the flags
    assert made[-1] == (20.0, 0.4) and seen == [(20.0, 0.4)] * SCREEN_RUNS
    assert out["calibration"] is None
    assert report.main(["--seed", "1", "--tpot-slo", "0"]) == 2
    assert report.main(["--seed", "1", "--ttft-slo", "2"]) == 2  # one level alone


def test_calibrate_and_the_quantiles_a_seed_draws():
    cal = {"ttfts": [0.3, 0.1, 0.2, 0.4], "tpots": [0.05, 0.0504]}
    # sorted TTFTs 0.1 .. 0.4: q 0.5 is the 3rd (0.3); TPOT q 0.9 the 2nd, 50.4 ms rounded up to 51 ms
    assert report.calibrate(cal, (0.5, 0.9)) == (0.3, 0.051)
    # nothing to calibrate on (every request a cache hit): the advisor's defaults
    assert report.calibrate({"ttfts": [], "tpots": []}, (0.5, 0.5)) == (report.TTFT_SLO, report.TPOT_SLO)
    qs = [report.slo_quantiles(seed, f"s{seed}-w0") for seed in range(30)]
    assert qs == [report.slo_quantiles(seed, f"s{seed}-w0") for seed in range(30)]  # the same seed, the same
    assert len(set(qs)) > 20 and all(report.QUANTILES[0] <= q <= report.QUANTILES[1] for pair in qs for q in pair)


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
        "ttfts": [ttft * k / 5 for k in range(1, 11)],
        "tpots": [tpot * k / 5 for k in range(1, 11)],
    }


class FakeReplayer:
    """Goodput by ``max_num_seqs``; any other value (the base's, or none) is the current configuration,
    whose runs answer ``current`` in turn (the screening runs, then its runs in the confirmations)."""

    def __init__(self, by_seqs: dict, current: list[float]):
        self.by_seqs, self.current, self.keys = by_seqs, list(current), []

    def run(self, keys: dict, tier_sets_model: bool = True, slo=None) -> dict:
        self.keys.append(keys)
        seqs = keys.get("max_num_seqs")
        if seqs not in self.by_seqs:
            return row(self.current.pop(0))
        return row(self.by_seqs[seqs], ttft=0.1, tpot=0.02)


SLO = (1.0, 0.1)
DIAGNOSIS = {"findings": [{"symptom": "ttft", "cause": "queueing", "key": "k", "proposal": {"max_num_seqs": 8}}]}


def test_a_leader_borne_out_by_its_confirmation_is_recommended_with_its_test():
    # screening: current 0.50, 0.55; max_num_seqs 8 -> 0.80, its neighbours 4 -> 0.60, 16 -> 0.75; then 8
    # confirmed against the current configuration, interleaved: 0.55, 0.50, 0.50, 0.55, 0.50, 0.55 vs 0.80 x 6:
    # p = 1/924
    fake = FakeReplayer({8: 0.8, 4: 0.6, 16: 0.75}, [0.5, 0.55, 0.55, 0.5, 0.5, 0.55, 0.5, 0.55])
    out = report.tune_workload([], DIAGNOSIS, {"model": "m", "max_num_seqs": 2}, budget_s=1000, slo=SLO, replayer=fake)
    assert out["recommended"] == {"max_num_seqs": 8}
    assert out["goodput_before"] == pytest.approx(0.525) and out["goodput_after"] == pytest.approx(0.8)
    assert out["p_value"] == pytest.approx(1 / 924, abs=1e-6) and out["effect"] == pytest.approx(0.275)
    assert out["cliffs_delta"] == 1.0 and out["level"] == 0.025
    assert out["goodput_rose"] and out["separation_ok"]
    assert out["latency_before"]["ttft_p50_s"] == 0.6 and out["latency_after"]["ttft_p50_s"] == pytest.approx(0.12)
    assert out["current_runs"] == [0.5, 0.55, 0.55, 0.5, 0.5, 0.55, 0.5, 0.55]
    assert [k.get("max_num_seqs") for k in fake.keys] == [2] * 2 + [8, 4, 16] + [2, 8, 8, 2] * 3
    assert out["top_finding"] == {"symptom": "ttft", "cause": "queueing", "key": "k"}


def test_no_leader_borne_out_is_no_change_with_the_closest_test_reported():
    # screening: current 0.50, 0.60; 8 -> 0.60 (a leader), 4 -> 0.55 (a leader), 16 -> 0.3 (below both);
    # both leaders confirmed at 0.6 / 0.55 against current runs around 0.55: no change
    fake = FakeReplayer({8: 0.6, 4: 0.55, 16: 0.3}, [0.5, 0.6, 0.55, 0.6, 0.55, 0.6] * 3)
    out = report.tune_workload([], DIAGNOSIS, {"model": "m"}, budget_s=1000, slo=SLO, replayer=fake)
    assert out["recommended"] is None and out["separation_ok"]
    assert out["goodput_after"] == out["goodput_before"] and not out["goodput_rose"]
    assert [c["change"] for c in out["confirmations"]] == [{"max_num_seqs": 8}, {"max_num_seqs": 4}]
    assert out["p_value"] == min(c["p_value"] for c in out["confirmations"]) and out["p_value"] > 0.025
    assert out["best_candidate"] == {"change": {"max_num_seqs": 8}, "goodput": 0.6}


def confirmation(name: int, current: list[float], runs: list[float]) -> Confirmation:
    return Confirmation.of(Candidate({"max_num_seqs": name}, "finding"), current, runs, 0.025)


def tuning(recommended: str | None, confirmations: list[Confirmation]) -> Tuning:
    """A hand-made tuning: the current configuration and two candidates, 0.9 and 0.7."""
    cur = Row(Candidate({}, "current"), 0.5, 0.5, 1.0, 0.05, 0.1, 10.0, 0.001, 0.0)
    a = Row(Candidate({"max_num_seqs": 8}, "finding"), 0.9, 0.1, 0.2, 0.02, 0.04, 10.0, 0.001, 0.4)
    b = Row(Candidate({"max_num_seqs": 4}, "neighbour"), 0.7, 0.2, 0.4, 0.02, 0.04, 10.0, 0.001, 0.2)
    pick = {"a": a, "b": b, None: None}[recommended]
    return Tuning(0.5, [a, b, cur], pick, current_runs=[0.5] * 6, confirmations=confirmations)


def test_judge_fails_where_a_separated_confirmation_is_not_recommended():
    sep = confirmation(8, [0.5, 0.5, 0.55, 0.5], [0.9, 0.85, 0.9, 0.95])  # every replay beats every current one
    mixed = confirmation(4, [0.5, 0.6, 0.55, 0.5], [0.7, 0.55, 0.6, 0.5])
    assert sep.separated and sep.passed and not mixed.separated and not mixed.passed
    assert report.judge(tuning("a", [sep]))["separation_ok"]
    assert report.judge(tuning(None, [mixed]))["separation_ok"]  # nothing separated: no change is fine
    assert report.judge(tuning(None, []))["separation_ok"]
    # a hand-made tuning that leaves a separated leader unrecommended breaks the rule
    broken = Confirmation(sep.candidate, sep.current_runs, sep.candidate_runs, 0.5, 0.025, sep.effect, sep.delta)
    assert broken.separated and not broken.passed
    assert not report.judge(tuning(None, [mixed, broken]))["separation_ok"]


def test_the_markdown_table_says_where_goodput_did_not_rise(tmp_path):
    fake = FakeReplayer({8: 0.6, 4: 0.55, 16: 0.3}, [0.9, 0.5, 0.6] + [0.55, 0.6, 0.55, 0.6, 0.55, 0.6] * 3)
    body = {"workload": "s1-w0", "kind": "burst"}
    body |= report.tune_workload([], DIAGNOSIS, {"model": "m"}, budget_s=100, replayer=fake, quantiles=(0.6, 0.7))
    result = {"seed": 1, "engine": {"max_num_seqs": 2}, "rows": [body]}
    text = report.markdown(result)
    # levels from the calibration run (the fake's first current run): TTFT 0.6 .. 0.7 of its 0.1 .. 1.0 s
    assert "| s1-w0 (burst) | 0.7 / 80 (q 0.60, 0.70) | [ttft] queueing | no change | 0.57 -> 0.57 |" in text
    assert "| max_num_seqs=8: 0.55, 0.60, 0.55, 0.60, 0.55, 0.60 vs 0.60, 0.60, 0.60, 0.60, 0.60, 0.60;" in text
    assert "| **no** | max_num_seqs=8 0.60 (3 of 3) | yes |" in text
    # a budget of nothing: nothing was tried, and the check says so instead of "yes"
    cut = FakeReplayer({}, [0.5] * 9)
    body2 = {**body, "workload": "s1-w1"} | report.tune_workload(
        [], DIAGNOSIS, {"model": "m"}, budget_s=1e-9, slo=SLO, replayer=cut
    )
    assert "| none replayed (0 of 3) | not judged |" in report.markdown({**result, "rows": [body2]})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result))
    assert report.main(["--seed", "1", "--markdown", str(path)]) == 0
    assert report.main(["--seed", "1", "--workloads", "0"]) == 2
