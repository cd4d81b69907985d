"""The operator's bound: Clopper-Pearson arithmetic by hand, the choice under a bound, and a gateway
config that asks for a bound the calibration cannot support refusing to load."""

from __future__ import annotations

import json
import math

import pytest

from gateway.cache import CacheConfig
from gateway.cache.calibration import Row, _binom_cdf, choose, interval, stricter, upper


def test_upper_bound_by_hand():
    # k = 0: P(X = 0) = (1 - p)^n = 0.05 -> p = 1 - 0.05^(1/n); "the rule of three": about 3/n
    assert upper(0, 300) == pytest.approx(1 - 0.05 ** (1 / 300))
    assert 2.9 / 300 < upper(0, 300) < 3.0 / 300
    # k > 0: the bound is the p at which seeing k or fewer has probability 5%
    for k, n in ((1, 474), (3, 100), (10, 200)):
        u = upper(k, n)
        assert _binom_cdf(k, n, u) == pytest.approx(0.05, abs=1e-9)
        assert u > k / n
    assert upper(5, 5) == 1.0 and upper(0, 0) == 1.0
    # the two-sided interval uses 2.5% tails and contains the point estimate
    lo, hi = interval(3, 24)
    assert lo < 3 / 24 < hi
    assert _binom_cdf(3, 24, hi) == pytest.approx(0.025, abs=1e-9)
    assert 1 - _binom_cdf(2, 24, lo) == pytest.approx(0.025, abs=1e-9)
    assert interval(0, 10)[0] == 0.0


def test_binomial_cdf_by_hand():
    # n = 3, p = 1/2: P(X <= 1) = (1 + 3) / 8
    assert _binom_cdf(1, 3, 0.5) == pytest.approx(0.5)
    assert _binom_cdf(0, 4, 0.25) == pytest.approx(0.75**4)
    assert math.isclose(_binom_cdf(3, 3, 0.3), 1.0)


ROWS = [
    Row(0.5, 0.5, false_hits=9, negatives=400, hits=300, positives=400),  # upper ~0.038
    Row(0.7, 0.5, false_hits=1, negatives=400, hits=250, positives=400),  # upper ~0.0118
    Row(0.8, 0.5, false_hits=0, negatives=400, hits=200, positives=400),  # upper ~0.0075
    Row(0.8, 0.9, false_hits=0, negatives=400, hits=200, positives=400),  # same recall, stricter
    Row(0.9, 0.9, false_hits=0, negatives=400, hits=100, positives=400),
]


def test_choose_takes_the_best_recall_within_the_bound_and_ties_go_strict():
    assert choose(ROWS, 0.05) == ROWS[0]
    assert choose(ROWS, 0.012) == ROWS[1]
    assert choose(ROWS, 0.01) == ROWS[3]  # 0.8/0.5 and 0.8/0.9 tie on recall: the stricter
    with pytest.raises(ValueError) as err:
        choose(ROWS, 0.005)
    assert "0.0075" in str(err.value) and "400 different-answer pairs" in str(err.value)


def test_stricter_halves_the_bound():
    # from 0.5/0.5 (upper ~0.038): the best recall with an upper bound <= 0.019 -> 0.7/0.5 (~0.0118)
    assert stricter(ROWS, (0.5, 0.5)) == (0.7, 0.5)
    # from 0.7/0.5: nothing reaches <= 0.0059 (the strictest rows are ~0.0075): exact only, say the caller
    assert stricter(ROWS, (0.7, 0.5)) is None
    # a point between grid rows is judged by its nearest stricter row
    assert stricter(ROWS, (0.45, 0.3)) == (0.7, 0.5)


def test_config_chooses_from_the_table_and_refuses_an_unsupported_bound(tmp_path):
    table = {"tables": {"cross_encoder": {"single": {"rows": [list(r.__dict__.values()) for r in ROWS]}}}}
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(table))
    c = CacheConfig(calibration=str(path), max_false_hit_rate=0.012)
    assert (c.threshold, c.checker_threshold) == (0.7, 0.5)
    assert c.threshold_source == {"single": "calibration", "conversation": "unused"}
    with pytest.raises(ValueError, match=r"cache\.max_false_hit_rate: single: .* cannot be supported"):
        CacheConfig(calibration=str(path), max_false_hit_rate=0.005)
    # thresholds set by hand are used as given, and said to be
    c = CacheConfig(calibration=str(path), max_false_hit_rate=0.005, threshold=0.6, checker_threshold=0.1)
    assert (c.threshold, c.checker_threshold, c.threshold_source["single"]) == (0.6, 0.1, "config")
    # semantic conversations need the table's conversation rows
    with pytest.raises(ValueError, match="no rows for checker 'cross_encoder', kind 'conversation'"):
        CacheConfig(calibration=str(path), max_false_hit_rate=0.012, conversation_match="semantic")
    with pytest.raises(ValueError, match=r"cache\.max_false_hit_rate: bad: unknown kind|unknown kind"):
        CacheConfig(calibration=str(path), max_false_hit_rate={"bad": 0.1})
    with pytest.raises(ValueError, match="must be a number in"):
        CacheConfig(calibration=str(path), max_false_hit_rate=0)


def test_the_shipped_table_supports_the_default_bound():
    c = CacheConfig()
    assert c.threshold_source["single"] == "calibration"
    assert c.bounds() == {"single": 0.01, "conversation": 0.01}


def test_the_gateway_refuses_to_start_with_a_bound_the_calibration_cannot_support(tmp_path):
    """`python -m gateway` with a bound below what the calibration supports: exit 2 and the reason, before
    any model loads."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    import shutil

    import yaml

    shipped = yaml.safe_load((root / "configs" / "gateway.yaml").read_text())
    shipped["cache"]["max_false_hit_rate"] = 0.0001
    shutil.copy(root / "configs" / "tiers.yaml", tmp_path / "tiers.yaml")
    cfg = tmp_path / "gw.yaml"
    cfg.write_text(yaml.safe_dump(shipped))
    proc = subprocess.run(
        [sys.executable, "-m", "gateway", "--config", str(cfg), "--port", "0"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "max_false_hit_rate 0.0001 cannot be supported" in proc.stderr and "set a bound of at least" in proc.stderr
    assert "Traceback" not in proc.stderr
