"""The operator's false-hit bound: thresholds chosen from a calibration table with a stated guarantee.

``scripts/calibrate_cache.py`` scores every pair of the calibration split (the dev splits of
``tests/data/cache``; the test splits are never read) with the shipped embedder and checker and writes,
per checker and kind of scope, one row per (cosine, checker) threshold pair: how many different-answer
pairs it lets through (false hits k of n) and how many same-answer pairs (hits of m). That table is
``models/calibration.json``.

``choose(table, bound)`` returns the row with the highest recall whose **one-sided 95% Clopper-Pearson
upper bound** on the false-hit rate, ``upper(k, n)``, is within ``bound`` (ties: the stricter row). The
guarantee: if the traffic's look-alikes are drawn like the calibration split's, the chosen thresholds'
false-hit rate exceeds ``bound`` with probability at most 5%. The bound cannot be tighter than
``upper(0, n)`` (about 3/n): a bound the table cannot support is a ``CalibrationError`` naming the
smallest one it can, and the gateway refuses to start with it.

What the guarantee does not cover: traffic unlike the calibration split. Live verification
(``gateway/cache/verify.py``) measures the rate on the real traffic and tightens a scope that crosses
the bound.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_TABLE = HERE / "models" / "calibration.json"
CONFIDENCE = 0.95


class CalibrationError(ValueError):
    pass


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space (n up to tens of thousands)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
    return min(1.0, total)


def upper(k: int, n: int, confidence: float = CONFIDENCE) -> float:
    """One-sided Clopper-Pearson upper confidence bound on a rate seen k times in n trials: the p at which
    seeing k or fewer has probability 1 - confidence. n == 0 gives 1.0 (nothing is known)."""
    if n <= 0:
        return 1.0
    if k >= n:
        return 1.0
    alpha = 1.0 - confidence
    if k == 0:
        return 1.0 - alpha ** (1.0 / n)
    lo, hi = k / n, 1.0
    for _ in range(100):  # bisection: the cdf falls as p rises
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def interval(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval (each tail (1 - confidence) / 2); (0, 1) when n == 0."""
    if n <= 0:
        return 0.0, 1.0
    tail = (1.0 + confidence) / 2
    lo = 0.0 if k == 0 else 1.0 - upper(n - k, n, tail)
    return lo, upper(k, n, tail)


@dataclass(frozen=True)
class Row:
    cosine: float
    checker: float
    false_hits: int
    negatives: int
    hits: int
    positives: int

    @property
    def recall(self) -> float:
        return self.hits / self.positives if self.positives else 0.0

    @property
    def upper(self) -> float:
        return upper(self.false_hits, self.negatives)


def choose(rows: list[Row], bound: float, what: str = "") -> Row:
    """The best-recall row whose upper bound is within ``bound``; ties go to the stricter thresholds."""
    ok = [r for r in rows if r.upper <= bound]
    if not ok:
        n = max((r.negatives for r in rows), default=0)
        best = min((r.upper for r in rows), default=1.0)
        raise CalibrationError(
            f"{what}max_false_hit_rate {bound} cannot be supported: the calibration split holds {n} "
            f"different-answer pairs, and the tightest 95% upper bound any thresholds reach on them is "
            f"{best:.4f} (with no false hit at all it would be {upper(0, n):.4f}); set a bound of at least "
            f"{best:.4f}, or calibrate on more pairs (scripts/calibrate_cache.py)"
        )
    return max(ok, key=lambda r: (r.recall, r.cosine, r.checker))


@lru_cache(maxsize=4)
def load_table(path: str = str(DEFAULT_TABLE)) -> dict:
    p = Path(path)
    if not p.is_file():
        raise CalibrationError(f"calibration table {p} is missing (python scripts/calibrate_cache.py writes it)")
    return json.loads(p.read_text(encoding="utf-8"))


def rows_for(table: dict, checker: str, kind: str) -> list[Row]:
    try:
        raw = table["tables"][checker][kind]["rows"]
    except KeyError:
        raise CalibrationError(f"the calibration table has no rows for checker {checker!r}, kind {kind!r}") from None
    return [Row(*r) for r in raw]


def stricter(rows: list[Row], current: tuple[float, float]) -> tuple[float, float] | None:
    """The next thresholds up from ``current`` (live tightening): the scope's bound is halved. Among rows
    at least as strict on both thresholds, the best-recall one whose calibration upper bound is at most
    half the current row's (the current point itself when it is not in the table: its nearest stricter
    row's); None when no row is that strict (the caller then serves exact hits only)."""
    cos, chk = current
    up = [r for r in rows if r.cosine >= cos and r.checker >= chk]
    if not up:
        return None
    here = min(up, key=lambda r: (r.cosine - cos) + (r.checker - chk))
    cands = [r for r in up if r.upper <= here.upper / 2 and (r.cosine, r.checker) != (cos, chk)]
    if not cands:
        return None
    best = max(cands, key=lambda r: (r.recall, -r.cosine - r.checker))
    return best.cosine, best.checker
