"""Advice tested before it is given: candidate changes replayed on the recorded traffic and ranked.

    python -m gateway.advise --tune --recording RECORDING [--url ...] [--window 30m] [--base KEY=VALUE ...]
                             [--model M] [--budget-s 600] [--out tuned.yaml] [--json]

In: the window's diagnosis (its findings, ``gateway.advise.symptoms``) and a way to replay the recording
on a configuration (``replay(change) -> row``: ``gateway.advise.replay.Replayer`` in the CLI, a fake in
the tests). Out: a ``Tuning`` with one ``Row`` per replayed candidate, ranked by goodput (the share of
requests within both service levels; goodputs within the replay's noise by p99, then by cost), and the
recommendation.

    candidates(findings)      each finding's proposal; its neighbours (max_num_seqs halved and doubled,
                              max_num_batched_tokens halved); the top two proposals combined
    tune(findings, replay)    the current configuration replayed ``noise_runs`` times (3); then each
                              candidate, until ``budget_s`` has passed counting from the first candidate
                              (the rest are listed as not replayed); then the current configuration once
                              more (the closing run, where a candidate was replayed): the mean of all its
                              runs is the baseline, and ``noise_of`` them bounds how far two runs of one
                              configuration can differ, drift over the search included; ranked by goodput,
                              goodputs within the noise of each other by the worse p99 (as a share of its
                              service level) and then by cost (``rank``); the best is recommended only if
                              it beats the baseline by more than the noise, else "no change helps"
    fragment(tuning, model)   the winning change as YAML for configs/gateway.yaml
    last(tuning, ...)         the result as the dashboard's Diagnosis panel shows it; ``--tune`` writes it
                              to ``last_tuning_path()`` (``$JAXSERVE_STATE_DIR/advisor/last_tuning.json``,
                              by default under ~/.cache/jaxserve) and ``GET /dashboard/tuning`` reads it

The findings stay the explanation; the ranking is the advice. Runs on the caller's thread, one replay at a
time (each replay owns the CPU while it runs: two at once would measure each other).
"""

from __future__ import annotations

import json
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
NOISE_RUNS = 3  # replays of the current configuration that the noise is estimated from


@dataclass(frozen=True)
class Candidate:
    change: dict  # replay keys changed from the current configuration ({} for the current one)
    source: str  # current | finding | neighbour | combined

    @property
    def name(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.change.items()) or "current"


@dataclass(frozen=True)
class Row:
    candidate: Candidate
    goodput: float
    ttft_p50_s: float | None
    ttft_p99_s: float | None
    tpot_p50_s: float | None
    tpot_p99_s: float | None
    tokens_per_s: float
    cost_usd: float
    vs_current: float  # goodput minus the current configuration's (its noise runs' mean)

    @classmethod
    def of(cls, candidate: Candidate, row: dict, baseline: float) -> Row:
        return cls(
            candidate,
            row["goodput"],
            row["ttft_s"]["p50"],
            row["ttft_s"]["p99"],
            row["tpot_s"]["p50"],
            row["tpot_s"]["p99"],
            row["output_tokens_per_s"],
            row["cost_usd"],
            round(row["goodput"] - baseline, 6),
        )


@dataclass(frozen=True)
class Tuning:
    baseline: float  # the current configuration's goodput, the mean of its runs (the closing one included)
    noise: float  # how far two replays of one configuration can differ in goodput (``noise_of``)
    rows: list[Row]  # the current configuration's first run and every replayed candidate, ranked
    recommended: Row | None  # None: no change helps
    not_replayed: list[Candidate] = field(default_factory=list)  # the budget ran out before them
    elapsed_s: float = 0.0  # the whole tuning, the noise runs included
    current_runs: list[float] = field(default_factory=list)  # the noise runs' goodputs, the closing run last
    flips: int = 0  # requests seen on both sides of the service levels across the noise runs
    search_s: float = 0.0  # the candidates' part of elapsed_s: what ``budget_s`` bounds

    @property
    def verdict(self) -> str:
        if self.recommended is None and self.not_replayed and len(self.rows) == 1:
            return (
                f"not judged: the search budget ran out before any of {len(self.not_replayed)} candidates was"
                f" replayed (current goodput {self.baseline:.3f}); raise --budget-s"
            )
        if self.recommended is None:
            return f"no change helps: no candidate beats the current goodput {self.baseline:.3f} by more than {self.noise:.3f}"
        r = self.recommended
        return (
            f"recommended: {r.candidate.name} (goodput {self.baseline:.3f} -> {r.goodput:.3f}, noise {self.noise:.3f})"
        )


def noise_of(runs: list[dict]) -> tuple[float, int]:
    """How far two replays of one configuration can differ in goodput, from ``runs`` (two or more replays
    of it, each with ``requests`` and, from ``replay.replay``, ``within``: per request, whether it met both
    service levels): ``(noise, flips)``.

    Why this bound. A run's goodput is G/N, a count over the recording's N requests. Two runs of one
    configuration differ only in the requests whose outcome the run's timing can change: those close to a
    service level. A request far from both lands on the same side every time. So |g_a - g_b| <= F/N, where
    F is the number of such flippable requests, however their flips are correlated. They are correlated:
    a load spike on a shared CPU pushes every marginal request the same way, which is why a binomial bound
    (requests as independent coins, sd sqrt(p(1-p)/N)) is too narrow: on seed 480973 the current
    configuration replayed at 3/23, 5/23 and 9/23, six requests apart, with p(1-p)/N giving 0.09. F is
    estimated by the requests seen on both sides across the runs (``flips``), plus one for a flippable
    request the runs happened not to show (the pseudo-count; it is also the old floor, one request's
    share). With three runs a request that flips half the time is seen flipping with probability 3/4; one
    that flips rarely is often missed, but then it rarely differs between two later runs either.

    Without ``within`` (a replay that does not report it) F is the smallest number of flips that explains
    the spread of goodputs: (max - min) * N."""
    n = max(1, max(r.get("requests", 1) for r in runs))
    if all(r.get("within") is not None for r in runs) and len({len(r["within"]) for r in runs}) == 1:
        flips = sum(len(set(side)) > 1 for side in zip(*(r["within"] for r in runs)))
    else:
        goodputs = [r["goodput"] for r in runs]
        flips = round((max(goodputs) - min(goodputs)) * n)
    return min(1.0, (flips + 1) / n), flips


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
    tie-breaker between goodputs within the noise. No latency (every request a cache hit) counts as 0."""
    return max((row.ttft_p99_s or 0.0) / slo[0], (row.tpot_p99_s or 0.0) / slo[1])


def rank(rows: list[Row], noise: float = 0.0, baseline: float | None = None, slo=(TTFT_SLO, TPOT_SLO)) -> list[Row]:
    """Goodput first (higher); goodputs within ``noise`` of the best left are one group, which is ordered by
    whether its goodput beats ``baseline`` by more than the noise, then by latency (``latency_of``), then by
    cost (lower); a stable sort keeps the candidates' order on ties. With ``noise`` 0: goodput, then latency
    and cost among equal goodputs."""
    left = sorted(rows, key=lambda r: -r.goodput)
    out: list[Row] = []
    while left:
        top = left[0].goodput
        group = [r for r in left if r.goodput >= top - noise - 1e-9]
        beats = lambda r: baseline is not None and r.goodput - baseline > noise  # noqa: E731
        out += sorted(group, key=lambda r: (not beats(r), latency_of(r, slo), r.cost_usd))
        left = [r for r in left if r not in group]
    return out


def tune(
    findings: Iterable[dict],
    replay: Callable[[dict], dict],
    *,
    budget_s: float = 600.0,
    clock: Callable[[], float] = time.monotonic,
    progress=None,
    noise_runs: int = NOISE_RUNS,
    slo: tuple[float, float] = (TTFT_SLO, TPOT_SLO),
    current: dict | None = None,
) -> Tuning:
    """Replay the current configuration ``noise_runs`` times (at least 2; always, budget or not: without
    them nothing can be judged), then each candidate, starting none after ``budget_s`` seconds of the
    candidates' search (the clock starts after the noise runs: they are the judge's cost, not the
    candidates', and a slow machine's longer noise runs would otherwise leave fewer candidates tried),
    then, where a candidate was replayed, the current configuration once more (the closing run, outside
    the budget too); the noise and the baseline are taken over all the current configuration's runs.
    ``replay(change)`` answers a replay row (``gateway.advise.replay.replay``'s keys: goodput, ttft_s,
    tpot_s, output_tokens_per_s, cost_usd, requests, within). ``slo``: the service levels the replay judges
    by (TTFT, TPOT seconds), for the latency tie-break. ``progress``: something with ``update(n)`` (a tqdm
    bar), told after each replay. ``current``: the current configuration's settings (``settings_of``), so
    that no candidate replays it again under another name."""
    start = clock()
    todo = candidates(findings, current)
    current = Candidate({}, "current")
    runs = []

    def run_current() -> None:
        runs.append(replay({}))
        if progress is not None:
            progress.update(1)

    for _ in range(max(2, noise_runs)):
        run_current()
    tried: list[tuple[Candidate, dict]] = []
    left: list[Candidate] = []
    search = clock()
    for i, c in enumerate(todo):
        if clock() - search >= budget_s:
            left = todo[i:]
            break
        tried.append((c, replay(c.change)))
        if progress is not None:
            progress.update(1)
    search_s = clock() - search
    # The closing run: the current configuration once more after the candidates, counted in the noise and
    # the baseline. The machine's speed can drift while the candidates replay (another job starts on a
    # shared CPU; on seed 972663 the current configuration's replays went from 31 s to 50-56 s of wall
    # time within minutes), and a candidate's gain must beat that drift too, not only the noise of runs
    # made back to back before it.
    if tried:
        run_current()
    baseline = statistics.fmean(r["goodput"] for r in runs)
    noise, flips = noise_of(runs)
    rows = [Row.of(current, runs[0], baseline)] + [Row.of(c, r, baseline) for c, r in tried]
    ranked = rank(rows, noise, baseline, slo)
    best = next((r for r in ranked if r.candidate.source != "current"), None)
    recommended = best if best is not None and best.goodput - baseline > noise else None
    return Tuning(
        round(baseline, 6),
        round(noise, 6),
        ranked,
        recommended,
        left,
        round(clock() - start, 3),
        [r["goodput"] for r in runs],
        flips,
        round(search_s, 3),
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
        f"# goodput {t.baseline:.3f} -> {r.goodput:.3f} (replay noise {t.noise:.3f}); merge into configs/gateway.yaml\n"
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
        "noise": t.noise,
        "current_runs": t.current_runs,
        "flips": t.flips,
        "verdict": t.verdict,
        "recommended": None if t.recommended is None else t.recommended.candidate.name,
        "rows": rows,
        "not_replayed": [c.name for c in t.not_replayed],
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

    bar = progress_bar(NOISE_RUNS + len(todo) + 1)
    try:
        slo = (args.ttft_slo, args.tpot_slo)
        result = tune(diagnosis["findings"], replay, budget_s=args.budget_s, progress=bar, slo=slo, current=current)
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
