"""Advice tested before it is given: candidate changes screened on the recorded traffic, the leaders
confirmed against the current configuration by a test with a stated significance, and ranked.

    python -m gateway.advise --tune --recording RECORDING [--url ...] [--window 30m] [--base KEY=VALUE ...]
                             [--model M] [--budget-s 600] [--alpha 0.05] [--out tuned.yaml] [--json]

In: the window's diagnosis (its findings, ``gateway.advise.symptoms``) and a way to replay the recording
on a configuration (``replay(change) -> row``: ``gateway.advise.replay.Replayer`` in the CLI, a fake in
the tests). Out: a ``Tuning`` with one ``Row`` per replayed candidate, the confirmations, and the
recommendation.

    candidates(findings)      each finding's proposal; its neighbours (max_num_seqs halved and doubled,
                              max_num_batched_tokens halved); the top two proposals combined
    tune(findings, replay)    screening: the current configuration replayed ``screen_runs`` times (2),
                              then each candidate once while the search budget leaves room for one
                              confirmation. Leaders: the candidates whose screening replay is not below
                              every screening run of the current one, best first (at most
                              ``max_confirm``, 2). Confirmation, leader by leader: ``confirm_runs`` (6) fresh
                              replays of the leader and as many of the current configuration, interleaved
                              ABBA so that a drifting machine hits both alike, and a one-sided exact
                              permutation test on the two sets of goodputs (``permutation_p``). The first
                              leader whose p is at most alpha / max_confirm is recommended (Bonferroni over
                              the leaders a search may confirm: the chance of recommending a change that is
                              no better is at most alpha, 0.05); else "no change helps"
    fragment(tuning, model)   the winning change as YAML for configs/gateway.yaml
    last(tuning, ...)         the result as the dashboard's Diagnosis panel shows it; ``--tune`` writes it
                              to ``last_tuning_path()`` (``$JAXSERVE_STATE_DIR/advisor/last_tuning.json``,
                              by default under ~/.cache/jaxserve) and ``GET /dashboard/tuning`` reads it

Why a test on replays and not a bound on goodput. The previous rule recommended a candidate only when its
one replay beat the mean of the current runs by a bound on how far two runs of one configuration can
differ: (requests seen on both sides of a service level + 1) / N. On a noisy workload most requests sit
near a level, so the bound was most of the range (0.62 of a goodput in [0, 1] on seed 91731's third
workload, where the candidate beat every current run by 0.16 or more) and it almost never recommended
anything. Here the unit of evidence is a whole replay (its requests move together under load, so they
are not independent coins), both configurations get the same number of them, and the error rates are
the test's: under no difference the confirmed leader's replays and the current ones are exchangeable, so
p <= level happens with probability at most level; ``scripts/advisor_power.py`` measures both directions
(false recommendations on planted nulls, recommendations of planted gains) on recorded workloads.
With 6 + 6 replays the smallest p is 1 / C(12, 6) = 1/924, and 23 of the 924 deals are within 0.05 / 2: when
every replay of a leader beats every replay of the current configuration it is recommended, and one or two
inversions can still pass. Why six: with four (1/70, where only complete separation passes at 0.025) a
simulation of the rule on goodputs of 25 requests with a spread (sd) of 0.08 found a 0.2 gain 54% of the
time; with six, 97% (0.70 at sd 0.12), for 20 replays a search instead of 16 (synthetic pools, before the
planted-gain measurement of ``scripts/advisor_power.py``, which is on other seeds' real replays).

The findings stay the explanation; the test is the advice. Runs on the caller's thread, one replay at a
time (each replay owns the CPU while it runs: two at once would measure each other).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gateway.advise.symptoms import TPOT_SLO, TTFT_SLO

# How a proposal's value is varied: its neighbours are the value times each factor (integers, at least 1;
# max_num_batched_tokens at least 16, the scheduler's smallest chunk).
NEIGHBOURS = {"max_num_seqs": (0.5, 2.0), "max_num_batched_tokens": (0.5,)}
FLOOR = {"max_num_seqs": 1, "max_num_batched_tokens": 16}
ALPHA = 0.05  # the chance of recommending a change that is no better, at most
SCREEN_RUNS = 2  # replays of the current configuration before the candidates' screening
CONFIRM_RUNS = 6  # a leader's confirmation: this many replays of it and as many of the current configuration
MAX_CONFIRM = 2  # leaders a search may confirm; each is tested at ALPHA / MAX_CONFIRM


@dataclass(frozen=True)
class Candidate:
    change: dict  # replay keys changed from the current configuration ({} for the current one)
    source: str  # current | finding | neighbour | combined

    @property
    def name(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.change.items()) or "current"


def _pooled(rows: list[dict], key: str, q: float, per_row: str) -> float | None:
    """The ``q`` quantile of every request's value over ``rows`` (their ``ttfts`` or ``tpots``) where each
    row has them, else the mean of the rows' own ``per_row`` quantile (a replay that reports no lists)."""
    from gateway.advise.replay import quantile

    if all(r.get(key) is not None for r in rows):
        return quantile([x for r in rows for x in r[key]], q)
    values = [r[per_row]["p50" if q == 0.5 else "p99"] for r in rows]
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


@dataclass(frozen=True)
class Row:
    candidate: Candidate
    goodput: float  # the mean over its replays
    ttft_p50_s: float | None
    ttft_p99_s: float | None
    tpot_p50_s: float | None
    tpot_p99_s: float | None
    tokens_per_s: float
    cost_usd: float
    vs_current: float  # goodput minus the current configuration's: its confirmation partner's mean, else all its runs'
    runs: int = 1  # replays behind the row
    p_value: float | None = None  # the confirmation's, where it had one

    @classmethod
    def of(cls, candidate: Candidate, rows: dict | list[dict], baseline: float, p_value: float | None = None) -> Row:
        """One replay's row, or several replays' pooled: the mean goodput, tokens/s and cost, and TTFT and
        TPOT quantiles over all their requests."""
        rows = [rows] if isinstance(rows, dict) else list(rows)
        goodput = statistics.fmean(r["goodput"] for r in rows)
        return cls(
            candidate,
            round(goodput, 6),
            _pooled(rows, "ttfts", 0.5, "ttft_s"),
            _pooled(rows, "ttfts", 0.99, "ttft_s"),
            _pooled(rows, "tpots", 0.5, "tpot_s"),
            _pooled(rows, "tpots", 0.99, "tpot_s"),
            statistics.fmean(r["output_tokens_per_s"] for r in rows),
            statistics.fmean(r["cost_usd"] for r in rows),
            round(goodput - baseline, 6),
            len(rows),
            p_value,
        )


def permutation_p(current: list[float], candidate: list[float]) -> float:
    """One-sided exact permutation test that ``candidate``'s goodputs are higher than ``current``'s: the
    share of the ways to deal the pooled replays into two groups of these sizes whose candidate group sums
    to at least the observed sum (ties count against the candidate, so the test is conservative). Under no
    difference the replays are exchangeable and P(p <= a) <= a for every a."""
    import numpy as np

    pooled, k = np.asarray(list(current) + list(candidate), dtype=np.float64), len(candidate)
    sums = pooled[_deals(len(pooled), k)].sum(axis=1)
    return float(np.mean(sums >= sum(candidate) - 1e-9))


@functools.lru_cache(maxsize=16)
def _deals(n: int, k: int):
    """Every way to pick ``k`` of ``n`` replays, as an index array (C(n, k) x k): 924 x 6 at 6 + 6."""
    import numpy as np

    return np.array(list(itertools.combinations(range(n), k)), dtype=np.intp).reshape(-1, k)


def cliffs_delta(current: list[float], candidate: list[float]) -> float:
    """P(a candidate replay beats a current one) - P(it loses), over every pair: +1 when all beat all."""
    wins = sum((x > y) - (x < y) for x in candidate for y in current)
    return wins / (len(candidate) * len(current))


@dataclass(frozen=True)
class Confirmation:
    """A leader's confirmation: its replays and the current configuration's, interleaved, and the test."""

    candidate: Candidate
    current_runs: list[float]
    candidate_runs: list[float]
    p_value: float
    level: float  # the p at or under which it is recommended (alpha / max_confirm)
    effect: float  # the mean goodput difference, candidate - current
    delta: float  # Cliff's delta (``cliffs_delta``)

    @property
    def passed(self) -> bool:
        return self.p_value <= self.level + 1e-12

    @property
    def separated(self) -> bool:
        """Every replay of the candidate beat every replay of the current configuration."""
        return min(self.candidate_runs) > max(self.current_runs)

    @classmethod
    def of(cls, candidate: Candidate, current: list[float], runs: list[float], level: float) -> Confirmation:
        return cls(
            candidate,
            list(current),
            list(runs),
            round(permutation_p(current, runs), 6),
            level,
            round(statistics.fmean(runs) - statistics.fmean(current), 6),
            round(cliffs_delta(current, runs), 6),
        )


@dataclass(frozen=True)
class Tuning:
    baseline: float  # the current configuration's goodput, the mean of all its runs
    rows: list[Row]  # the current configuration (all its runs pooled) and every replayed candidate, ranked
    recommended: Row | None  # None: no change helps
    not_replayed: list[Candidate] = field(default_factory=list)  # the budget ran out before them
    elapsed_s: float = 0.0  # the whole tuning, the screening runs of the current configuration included
    current_runs: list[float] = field(default_factory=list)  # every replay of the current one, in order
    search_s: float = 0.0  # the candidates' part of elapsed_s: what ``budget_s`` bounds
    confirmations: list[Confirmation] = field(default_factory=list)  # in the order they ran
    alpha: float = ALPHA
    level: float = ALPHA / MAX_CONFIRM  # each confirmation's test level
    not_confirmed: list[Candidate] = field(default_factory=list)  # leaders the budget left unconfirmed

    @property
    def verdict(self) -> str:
        if self.recommended is None and self.not_replayed and len(self.rows) == 1:
            return (
                f"not judged: the search budget ran out before any of {len(self.not_replayed)} candidates was"
                f" replayed (current goodput {self.baseline:.3f}); raise --budget-s"
            )
        c = next((c for c in self.confirmations if c.passed), None)
        if c is not None:
            n = len(c.candidate_runs)
            return (
                f"recommended: {c.candidate.name} (goodput {statistics.fmean(c.current_runs):.3f} ->"
                f" {statistics.fmean(c.candidate_runs):.3f} over {n} + {n} interleaved replays; one-sided"
                f" permutation p = {c.p_value:.3f} <= {self.level:.3f}; effect {c.effect:+.3f},"
                f" Cliff's delta {c.delta:+.2f})"
            )
        if not self.confirmations:
            return (
                "no change helps: no candidate's screening replay reached the current configuration's"
                f" (goodput {self.baseline:.3f})"
            )
        tried = "; ".join(f"{c.candidate.name} p = {c.p_value:.3f}, effect {c.effect:+.3f}" for c in self.confirmations)
        return f"no change helps: no confirmation beat the current configuration at p <= {self.level:.3f} ({tried})"


def _vary(key: str, value) -> list:
    if key not in NEIGHBOURS or isinstance(value, bool) or not isinstance(value, int):
        return []
    return [max(FLOOR[key], int(value * f)) for f in NEIGHBOURS[key]]


def candidates(findings: Iterable[dict], current: dict | None = None) -> list[Candidate]:
    """The changes worth replaying for these findings (``asdict`` of ``symptoms.Finding``, in the tree's
    order), each once: the proposals, their neighbours, and the first two proposals together when they
    change different keys. ``current``: the settings the current configuration runs with
    (``settings_of``); a change that sets nothing otherwise than they do is the current configuration
    itself, already replayed, and is left out (a finding proposed max_num_seqs=4 to an engine at 4)."""
    proposals = [dict(f["proposal"]) for f in findings if f.get("proposal")]
    out: list[Candidate] = []
    current = current or {}

    def add(change: dict, source: str) -> None:
        if any(k not in current or current[k] != v for k, v in change.items()) and all(c.change != change for c in out):
            out.append(Candidate(change, source))

    for p in proposals:
        add(p, "finding")
    for p in proposals:
        for key, value in p.items():
            for v in _vary(key, value):
                add({**p, key: v}, "neighbour")
    if len(proposals) >= 2 and not set(proposals[0]) & set(proposals[1]):
        add({**proposals[0], **proposals[1]}, "combined")
    return out


def settings_of(keys: dict) -> dict:
    """Every setting a replay of ``keys`` (``Replayer.run``'s: EngineConfig fields with ``model``, and the
    replay's own keys) runs with: the EngineConfig's fields, defaults included, and the cache mode."""
    from dataclasses import MISSING, fields

    from runtime.api import EngineConfig

    defaults = {f.name: f.default for f in fields(EngineConfig) if f.default is not MISSING}
    return {**defaults, "cache": "none", **keys}


def latency_of(row: Row, slo: tuple[float, float]) -> float:
    """The worse p99 as a share of its service level (TTFT p99 / TTFT level, TPOT p99 / TPOT level): the
    tie-breaker between equal goodputs. No latency (every request a cache hit) counts as 0."""
    return max((row.ttft_p99_s or 0.0) / slo[0], (row.tpot_p99_s or 0.0) / slo[1])


def rank(rows: list[Row], recommended: Row | None = None, slo=(TTFT_SLO, TPOT_SLO)) -> list[Row]:
    """The recommended row first; the rest by goodput (higher), then latency (``latency_of``), then cost
    (lower); a stable sort keeps the candidates' order on ties."""
    rest = sorted((r for r in rows if r is not recommended), key=lambda r: (-r.goodput, latency_of(r, slo), r.cost_usd))
    return ([recommended] if recommended is not None else []) + rest


def tune(
    findings: Iterable[dict],
    replay: Callable[[dict], dict],
    *,
    budget_s: float = 600.0,
    clock: Callable[[], float] = time.monotonic,
    progress=None,
    alpha: float = ALPHA,
    screen_runs: int = SCREEN_RUNS,
    confirm_runs: int = CONFIRM_RUNS,
    max_confirm: int = MAX_CONFIRM,
    slo: tuple[float, float] = (TTFT_SLO, TPOT_SLO),
    current: dict | None = None,
) -> Tuning:
    """Screen, then confirm the leaders (the module's docstring has the rule and why).

    ``budget_s`` bounds the candidates' search, screening and confirmations together, with the clock
    started after the current configuration's screening runs (always made: nothing can be judged without
    them). Once a leader exists, a candidate is screened only while the search leaves room for one confirmation (2 x
    ``confirm_runs`` replays at the mean replay time so far, builds left out), and the first one always; the best leader is
    always confirmed, a later one only while its confirmation fits the budget. ``replay(change)`` answers
    a replay row (``gateway.advise.replay.replay``'s keys: goodput, ttft_s, tpot_s, output_tokens_per_s,
    cost_usd, requests, and ttfts and tpots where it has them). ``slo``: the service levels the replay
    judges by (TTFT, TPOT seconds), for the latency tie-break. ``progress``: something with ``update(n)``
    (a tqdm bar), told after each replay. ``current``: the current configuration's settings
    (``settings_of``), so that no candidate replays it again under another name. Raises ``ValueError``
    when the level cannot be reached at all (1 / C(2 confirm_runs, confirm_runs) > alpha / max_confirm)."""
    level = alpha / max(1, max_confirm)
    if 1 / math.comb(2 * confirm_runs, confirm_runs) > level + 1e-12:
        raise ValueError(
            f"{confirm_runs} + {confirm_runs} replays cannot reach p <= {level:.4f} (the smallest p is"
            f" 1/{math.comb(2 * confirm_runs, confirm_runs)}): raise confirm_runs or alpha"
        )
    start = clock()
    todo = candidates(findings, current)
    now_cfg = Candidate({}, "current")
    current_rows: list[dict] = []
    seconds: list[float] = []

    def timed(change: dict) -> dict:
        t = clock()
        row = replay(change)
        # what a confirmation replay will cost: the replay's own run time where it reports one (``wall_s``),
        # not the engine build a screened candidate pays once (a confirmation alternates two open engines);
        # counting builds priced a confirmation at minutes too many and stopped screening after one or two
        # candidates on seed 191653
        seconds.append(row.get("wall_s") or (clock() - t))
        if progress is not None:
            progress.update(1)
        return row

    for _ in range(max(1, screen_runs)):
        current_rows.append(timed({}))
    confirm_cost = lambda: 2 * confirm_runs * statistics.fmean(seconds)  # noqa: E731
    screened: list[tuple[Candidate, dict]] = []
    left: list[Candidate] = []
    search = clock()
    reference = min(r["goodput"] for r in current_rows)
    leads = lambda row: row["goodput"] >= reference - 1e-9  # noqa: E731  not below both screening runs
    for i, c in enumerate(todo):
        # room is kept for a confirmation only once there is a leader to confirm: with none yet, screening
        # may use the whole budget (seed 120959 stopped after one candidate, below the current one, and
        # then had nothing to confirm)
        leading = any(leads(r) for _, r in screened)
        if clock() - search >= budget_s or (leading and clock() - search + confirm_cost() > budget_s):
            left = todo[i:]
            break
        screened.append((c, timed(c.change)))
    first_rows = [Row.of(c, r, 0.0) for c, r in screened]
    leaders = sorted(
        (i for i, (c, r) in enumerate(screened) if leads(r)),
        key=lambda i: (-first_rows[i].goodput, latency_of(first_rows[i], slo), first_rows[i].cost_usd),
    )[: max(0, max_confirm)]
    confirmations: list[Confirmation] = []
    confirmed: dict[int, tuple[Confirmation, list[dict]]] = {}  # screened index -> its confirmation, its replays
    not_confirmed: list[Candidate] = []
    for j, i in enumerate(leaders):
        c = screened[i][0]
        if j > 0 and clock() - search + confirm_cost() > budget_s:
            not_confirmed = [screened[k][0] for k in leaders[j:]]
            break
        mine, theirs = [], []
        for n in range(confirm_runs):  # ABBA: current, leader, leader, current, current, leader, ...
            order = ((theirs, {}), (mine, c.change)) if n % 2 == 0 else ((mine, c.change), (theirs, {}))
            for runs, change in order:
                runs.append(timed(change))
        current_rows += theirs
        conf = Confirmation.of(c, [r["goodput"] for r in theirs], [r["goodput"] for r in mine], level)
        confirmations.append(conf)
        confirmed[i] = (conf, mine)
        if conf.passed:
            break
    search_s = clock() - search
    baseline = statistics.fmean(r["goodput"] for r in current_rows)
    rows = [Row.of(now_cfg, current_rows, baseline)]
    recommended = None
    for i, (c, r) in enumerate(screened):
        if i not in confirmed:
            rows.append(Row.of(c, r, baseline))
            continue
        conf, mine = confirmed[i]
        row = Row.of(c, mine, statistics.fmean(conf.current_runs), conf.p_value)
        rows.append(row)
        if conf.passed:
            recommended = row
    return Tuning(
        round(baseline, 6),
        rank(rows, recommended, slo),
        recommended,
        left,
        round(clock() - start, 3),
        [r["goodput"] for r in current_rows],
        round(search_s, 3),
        confirmations,
        alpha,
        level,
        not_confirmed,
    )


# ---------------------------------------------------------------- output: the table and the YAML fragment


def table(t: Tuning) -> str:
    fmt = lambda v, d=3: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    head = f"{'candidate':42}{'goodput':>9}{'TTFT p50':>10}{'p99':>8}{'TPOT p50':>10}{'p99':>8}{'tok/s':>8}"
    lines = [head + f"{'cost USD':>12}{'vs current':>12}"]
    for r in t.rows:
        mark = "*" if r is t.recommended else " "
        lines.append(
            f"{mark}{r.candidate.name[:41]:41}{fmt(r.goodput):>9}{fmt(r.ttft_p50_s):>10}{fmt(r.ttft_p99_s):>8}"
            f"{fmt(r.tpot_p50_s):>10}{fmt(r.tpot_p99_s):>8}{fmt(r.tokens_per_s, 1):>8}{fmt(r.cost_usd, 6):>12}"
            f"{r.vs_current:>+12.3f}"
        )
    for c in t.not_replayed:
        lines.append(f" {c.name[:41]:41}  not replayed: the search budget ran out")
    for c in t.confirmations:
        n = len(c.candidate_runs)
        lines.append(
            f"confirmation of {c.candidate.name}: {n} + {n} interleaved replays, current"
            f" {', '.join(f'{g:.2f}' for g in c.current_runs)} vs {', '.join(f'{g:.2f}' for g in c.candidate_runs)};"
            f" p = {c.p_value:.3f} (level {c.level:.3f}), effect {c.effect:+.3f}, Cliff's delta {c.delta:+.2f}"
        )
    for c in t.not_confirmed:
        lines.append(f"not confirmed (the search budget ran out): {c.name}")
    lines.append(t.verdict)
    return "\n".join(lines)


def fragment(t: Tuning, model: str, recording: str = "") -> str | None:
    """The recommended change as a configs/gateway.yaml fragment (None when no change helps): engine keys
    under the model (kv_cache_bytes as kv_cache_mb), ``tier`` as the router's default, ``cache=exact`` as
    the semantic cache turned on (it answers at least the exact repeats the replay counted)."""
    import yaml

    if t.recommended is None:
        return None
    engine, doc = {}, {}
    for key, value in t.recommended.candidate.change.items():
        if key == "tier":
            doc["tiers"] = {"router": {"default": value}}
        elif key == "cache":
            doc["cache"] = {"enabled": True}
        elif key == "cache_threshold":
            doc.setdefault("cache", {})["threshold"] = value
        elif key == "kv_cache_bytes":
            engine["kv_cache_mb"] = int(value) >> 20
        else:
            engine[key] = value
    if engine:
        doc = {"models": [{"name": model, "engine": engine}], **doc}
    r = t.recommended
    head = (
        f"# python -m gateway.advise --tune{' on ' + recording if recording else ''}: {r.candidate.name}\n"
        f"# goodput {r.goodput - r.vs_current:.3f} -> {r.goodput:.3f} (p = {r.p_value:.3f}, {r.runs} + {r.runs} replays);"
        " merge into configs/gateway.yaml\n"
    )
    return head + yaml.safe_dump(doc, sort_keys=False)


# ---------------------------------------------------------------- the last result, for the dashboard


def last_tuning_path() -> Path:
    """Where ``--tune`` leaves its last result and ``GET /dashboard/tuning`` finds it: the state folder
    (``$JAXSERVE_STATE_DIR``, else ~/.cache/jaxserve, where the gateway keeps its cache file and compiled
    programs), ``advisor/last_tuning.json``. Read on each call: a test or a second gateway sets the variable."""
    return (
        Path(os.environ.get("JAXSERVE_STATE_DIR") or "~/.cache/jaxserve").expanduser() / "advisor" / "last_tuning.json"
    )


def last(t: Tuning, *, recording: str = "", yaml_text: str | None = None, finished_at: float | None = None) -> dict:
    """The tuning as plain JSON for the dashboard: when, on what, the verdict and the ranked rows."""
    rows = [
        {
            "candidate": r.candidate.name,
            "source": r.candidate.source,
            "recommended": r is t.recommended,
            **{k: v for k, v in asdict(r).items() if k != "candidate"},
        }
        for r in t.rows
    ]
    return {
        "finished_at": time.time() if finished_at is None else finished_at,
        "recording": recording,
        "baseline": t.baseline,
        "current_runs": t.current_runs,
        "alpha": t.alpha,
        "level": t.level,
        "confirmations": [
            {
                **{k: v for k, v in asdict(c).items() if k != "candidate"},
                "candidate": c.candidate.name,
                "passed": c.passed,
            }
            for c in t.confirmations
        ],
        "verdict": t.verdict,
        "recommended": None if t.recommended is None else t.recommended.candidate.name,
        "rows": rows,
        "not_replayed": [c.name for c in t.not_replayed],
        "not_confirmed": [c.name for c in t.not_confirmed],
        "elapsed_s": t.elapsed_s,
        "fragment": yaml_text,
    }


def save_last(body: dict, path: Path | None = None) -> Path:
    """Write ``last``'s JSON whole (a temporary file renamed over the old one: a reader never sees half)."""
    path = path or last_tuning_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=1))
    tmp.replace(path)
    return path


def read_last(path: Path | None = None) -> dict | None:
    """The last tuning result, or None when there is none (or it cannot be read as JSON)."""
    try:
        return json.loads((path or last_tuning_path()).read_text())
    except (OSError, ValueError):
        return None


def main(args, diagnosis: dict) -> int:
    """``python -m gateway.advise --tune``: ``args`` from gateway.advise.cli's parser, ``diagnosis`` the
    window's report. Prints the table (JSON with ``--json``), writes the fragment to ``--out`` and the
    result to ``last_tuning_path()``."""
    from gateway.advise.replay import TIERS, Replayer, parse_try, replayable

    alpha = getattr(args, "alpha", ALPHA)
    if not 0 < alpha < 1 or 1 / math.comb(2 * CONFIRM_RUNS, CONFIRM_RUNS) > alpha / MAX_CONFIRM:
        smallest = MAX_CONFIRM / math.comb(2 * CONFIRM_RUNS, CONFIRM_RUNS)
        print(
            f"error: --alpha {alpha}: want a share in [{smallest:.3f}, 1) (the test's smallest p, x {MAX_CONFIRM} leaders)",
            file=sys.stderr,
        )
        return 2
    base = {"model": args.model, **parse_try(args.base)}
    shapes = replayable(args.recording, args.max_requests)
    if not any(s.get("cache") != "hit" for s in shapes):
        print(f"error: {args.recording}: no request that reached a model", file=sys.stderr)
        return 2
    replayer = Replayer(shapes, args.ttft_slo, args.tpot_slo, args.time_scale, args.tiers or TIERS)
    current = settings_of(base)
    todo = candidates(diagnosis["findings"], current)
    print(
        f"{len(diagnosis['findings'])} findings, {len(todo)} candidates; replaying {len(shapes)} requests each",
        file=sys.stderr,
    )

    def replay(change: dict) -> dict:
        return replayer.run({**base, **change}, tier_sets_model="model" not in change)

    bar = progress_bar(SCREEN_RUNS + len(todo) + 2 * CONFIRM_RUNS * min(MAX_CONFIRM, len(todo)))
    try:
        slo = (args.ttft_slo, args.tpot_slo)
        result = tune(
            diagnosis["findings"], replay, budget_s=args.budget_s, progress=bar, slo=slo, current=current, alpha=alpha
        )
    finally:
        bar.close()
        replayer.close()
    yaml_text = fragment(result, base["model"], str(args.recording))
    if yaml_text is not None:
        Path(args.out).write_text(yaml_text)
    saved = save_last(last(result, recording=str(args.recording), yaml_text=yaml_text))
    print(f"the result, for the dashboard's Diagnosis panel: {saved}", file=sys.stderr)
    if args.json:
        print(json.dumps({**asdict(result), "verdict": result.verdict, "fragment": yaml_text}, indent=2))
    else:
        print(table(result))
        if yaml_text is not None:
            print(f"the change, as YAML: {args.out}")
    return 0


class _Lines:
    """A progress bar without tqdm: one line on stderr per replay."""

    def __init__(self, total: int):
        self.total, self.n = total, 0

    def update(self, n: int) -> None:
        self.n += n
        print(f"replayed {self.n}/{self.total}", file=sys.stderr)

    def close(self) -> None:
        pass


def progress_bar(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Lines(total)
    return tqdm(total=total, desc="replaying", unit="config", file=sys.stderr)
