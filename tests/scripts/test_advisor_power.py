"""scripts/advisor_power.py without its engines: the trials run ``gateway.advise.tune.tune`` itself on draws
from pools of goodputs written below. A planted null (every arm the same pool) is recommended at most
alpha of the time; a planted gain whose every replay beats every replay of the current one is recommended
every time; a gain buried in noise is found less often than a clear one. (The pools of real replays are
docs/results/advisor_power.json.)"""

from __future__ import annotations

import json
import random

from gateway.advise.tune import ALPHA
from tests.support.scripts import load_script

power = load_script("advisor_power")

POOLS = {
    "fast": [0.60, 0.65, 0.55, 0.70, 0.60, 0.65, 0.60, 0.55],
    "slow10": [0.55, 0.60, 0.50, 0.65, 0.55, 0.60, 0.55, 0.50],  # 0.05 below, overlapping
    "slow30": [0.20, 0.25, 0.15, 0.30, 0.20, 0.25, 0.20, 0.15],  # every value below every fast one
}
N = 1000
SD = (ALPHA * (1 - ALPHA) / N) ** 0.5  # the binomial sd of a rate of ALPHA over N trials


def test_a_planted_null_is_recommended_at_most_alpha_of_the_time():
    r = power.trials(POOLS, "null", N, seed=1)
    assert r["current"] == "fast" and r["trials"] == N
    assert r["false_rate"] <= ALPHA + 3 * SD, r
    lo, hi = r["false_rate_ci95"]
    assert lo <= r["false_rate"] <= hi


def test_a_separated_gain_is_always_recommended_and_an_overlapping_one_less_often():
    clear = power.trials(POOLS, "gain30", N, seed=1)
    assert clear["planted_gain"] == round(sum(POOLS["fast"]) / 8 - sum(POOLS["slow30"]) / 8, 4)
    # every draw of fast beats every draw of slow30: each confirmation separates, p = 1/924 <= 0.025
    assert clear["power"] == 1.0 and clear["false_recommendations"] == 0
    buried = power.trials(POOLS, "gain10", N, seed=1)
    assert buried["power"] < clear["power"] and buried["false_rate"] <= ALPHA + 3 * SD


def test_pool_replay_answers_from_the_pool_the_change_names():
    rng = random.Random(0)
    fake = power.PoolReplay(POOLS, "slow30", {"twin": "slow30"}, rng)
    assert fake({})["goodput"] in POOLS["slow30"] and fake({"arm": "twin"})["goodput"] in POOLS["slow30"]
    assert fake({"arm": "fast"})["goodput"] in POOLS["fast"] and fake.calls == 3


def test_the_trials_again_from_a_json_of_pools(tmp_path, capsys):
    measured = {"seed": 3, "delays_ms": [30], "workloads": [{"workload": "w", "kind": "steady", "pools": POOLS}]}
    src = tmp_path / "pools.json"
    src.write_text(json.dumps({"measured": measured}))
    out = tmp_path / "out.json"
    assert power.main(["--from-json", str(src), "--trials", "200", "--out", str(out)]) == 0
    body = json.loads(out.read_text())
    assert [r["scenario"] for r in body["rows"]] == ["null", "gain30"]
    assert body["summary"]["power_at_gain_0.2_or_more_min"] == 1.0 and out.with_suffix(".png").stat().st_size > 0
    assert power.main(["--delays-ms", "x"]) == 2 and power.main(["--pool", "1"]) == 2
