"""The advisor judged on workloads drawn from a seed: its top recommendation replayed, goodput before -> after.

    python scripts/advisor_report.py --seed N [--workloads 3] [--budget-s 300] [--ttft-slo S --tpot-slo S] [--json-out PATH]

A seed draws a deployment (one engine configuration for SmolLM2: max_num_seqs, max_num_batched_tokens,
the KV cache's size, prefix caching on or off) and ``--workloads`` workloads (``draw``). Each workload is
a kind (steady Poisson arrivals, one burst, or waves) with parameters drawn from the seed's generator:
the number of requests, the arrival rate, the prompt and answer length distributions, the share of
requests behind one shared system prompt, the share that repeat an earlier request exactly, the share
asking for the priced ``large`` tier. Nothing in a workload names the finding it should produce, and no
list decides what passes.

For one seed (``run_seed``):

1. one real ``python -m gateway`` process serves the drawn engine (tiers ``small`` and ``large``, both on
   the model in-process; the traffic-shape recorder on) and takes each workload in turn over HTTP
   (streamed chat completions, greedy, ``min_tokens = max_tokens``). Around each workload ``GET /metrics``
   is read (and the KV gauge sampled each second for its peak); the recorder's lines of that workload
   become its recording;
2. with the gateway stopped, per workload (``tune_workload``, in this process, replaying through
   ``gateway.advise.replay.Replayer``): the service levels are calibrated (``calibrate``: one replay of
   the current configuration, its TTFT and TPOT at quantiles the seed draws, ``slo_quantiles``; the rule
   is written above ``QUANTILES``) unless ``--ttft-slo``/``--tpot-slo`` fix them; the advisor's diagnosis is
   ``symptoms.report`` of the metrics' difference at those levels; then the tuner
   (``gateway.advise.tune.tune``) screens: the current configuration ``tune.SCREEN_RUNS`` times, each
   candidate once within ``--budget-s`` (counted from the first candidate, room left for a confirmation);
   then confirms the leaders: ``tune.CONFIRM_RUNS`` replays of a leader and as many of the current
   configuration, interleaved, and a one-sided exact permutation test at alpha / leaders.

Per workload the report gives the levels, the top-ranked finding, the recommended change (or "no
change"), goodput before -> after of the recommended change (the means of its confirmation's replays of
the current configuration and of the change; no change: after = before, the mean of every current run)
with the test's p-value, effect and Cliff's delta, TTFT and TPOT p50 and p99 (pooled over the requests of
every replay behind the row), whether goodput rose, and the issue's check (``judge``):

- ``separation_ok``: wherever a leader's confirmation replays all beat the current configuration's, it is
  recommended (or a leader confirmed before it was).

Prints the result as JSON and writes it to ``docs/results/advisor_report_seed{N}.json``; ``--markdown``
prints the table docs/ADVISOR.md quotes. Minutes per workload on a CPU: each candidate builds an engine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.advise.symptoms import MIN_REQUESTS, TPOT_SLO, TTFT_SLO  # noqa: E402  the advisor's defaults

MODEL = "smollm2-135m"
PRICES = {"small": {"input_per_mtok": 0.10, "output_per_mtok": 0.40}}  # configs/tiers.yaml's small and large
PRICES["large"] = {"input_per_mtok": 0.60, "output_per_mtok": 2.40}
KINDS = ("steady", "burst", "waves")
WORDS = (
    "the bakery opens at seven and closes at six on weekdays while on saturdays it opens at eight and closes "
    "at two the sourdough needs a long proof and the croissants are laminated by hand every morning"
).split()
MAX_MODEL_LEN = 768  # a 250-word system prompt, a 200-word question and a 64-token answer fit (~1.3 tokens a word)


@dataclass(frozen=True)
class Request:
    t: float  # arrival, seconds after the workload's start
    messages: list[dict]
    max_tokens: int
    tier: str  # small | large


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # steady | burst | waves
    params: dict  # what was drawn (the rate, the length distributions, the shares)
    requests: list[Request] = field(repr=False)


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def draw_engine(rng: random.Random) -> dict:
    """The deployment's engine (configs/gateway.yaml keys). float32 weights; KV 48 MiB holds ~1,000 tokens."""
    return {
        "dtype": "float32",
        "max_model_len": MAX_MODEL_LEN,
        "max_num_seqs": rng.choice([2, 4, 8, 16]),
        "max_num_batched_tokens": rng.choice([128, 256, 512]),
        "kv_cache_mb": rng.choice([48, 64, 128]),
        "enable_prefix_caching": rng.random() < 0.5,
        "background_compile": False,  # ready only once compiled: no workload shares the CPU with compiling
        "prime_programs": True,
    }


def arrivals(rng: random.Random, kind: str, n: int) -> tuple[list[float], dict]:
    if kind == "steady":  # Poisson arrivals
        rate = round(rng.uniform(0.5, 3.0), 2)
        ts, t = [], 0.0
        for _ in range(n):
            ts.append(t)
            t += rng.expovariate(rate)
        return ts, {"rate_per_s": rate}
    if kind == "burst":  # everything within half a second
        return sorted(rng.uniform(0, 0.5) for _ in range(n)), {"burst_s": 0.5}
    waves, gap = rng.randint(2, 4), round(rng.uniform(3.0, 8.0), 1)  # groups of requests, gap seconds apart
    return sorted(gap * (i % waves) + rng.uniform(0, 0.3) for i in range(n)), {"waves": waves, "gap_s": gap}


def draw_workload(rng: random.Random, name: str) -> Workload:
    kind = rng.choice(KINDS)
    n = rng.randint(MIN_REQUESTS + 2, MIN_REQUESTS + 8)  # a diagnosis needs MIN_REQUESTS answered
    ts, shape = arrivals(rng, kind, n)
    p = {"requests": n, **shape}
    p["question_words_mean"] = rng.choice([8, 30, 80, 160])
    p["answer_tokens"] = sorted(rng.sample([4, 8, 16, 24, 32, 48, 64], 2))  # uniform between the two
    p["shared_prefix_share"] = round(rng.choice([0.0, rng.uniform(0.2, 1.0)]), 2)
    p["system_words"] = rng.randint(100, 250)
    p["repeat_share"] = round(rng.choice([0.0, rng.uniform(0.1, 0.6)]), 2)
    p["large_tier_share"] = round(rng.choice([0.0, 0.0, rng.uniform(0.3, 1.0)]), 2)
    system = {"role": "system", "content": f"You answer for bakery {name}. " + words(rng, p["system_words"])}
    reqs: list[Request] = []
    for i, t in enumerate(ts):
        if reqs and rng.random() < p["repeat_share"]:  # an exact repeat of an earlier request
            r = rng.choice(reqs)
            reqs.append(Request(round(t, 3), r.messages, r.max_tokens, r.tier))
            continue
        n_words = max(4, min(200, round(rng.lognormvariate(math.log(p["question_words_mean"]), 0.5))))
        content = f"Question {i} for {name}: {words(rng, n_words)}?"
        messages = ([system] if rng.random() < p["shared_prefix_share"] else []) + [
            {"role": "user", "content": content}
        ]
        tier = "large" if rng.random() < p["large_tier_share"] else "small"
        reqs.append(Request(round(t, 3), messages, rng.randint(*p["answer_tokens"]), tier))
    return Workload(name, kind, p, reqs)


def draw(seed: int, count: int = 3) -> tuple[dict, list[Workload]]:
    """The seed's engine and ``count`` workloads: everything from ``random.Random(seed)``."""
    rng = random.Random(seed)
    engine = draw_engine(rng)
    return engine, [draw_workload(rng, f"s{seed}-w{i}") for i in range(count)]


def replay_keys(engine: dict) -> dict:
    """The gateway's engine keys as replay keys (kv_cache_mb is kv_cache_bytes there)."""
    out = {"model": MODEL}
    for k, v in engine.items():
        k, v = ("kv_cache_bytes", v << 20) if k == "kv_cache_mb" else (k, v)
        out[k] = v
    return out


# ---------------------------------------------------------------- the service levels (fixed before any seed was run)

# The rule, chosen before any evaluation seed was drawn and not changed on them: each workload's levels are
# its own current configuration's latencies on this machine, taken at quantiles drawn from the seed. One
# replay of the current configuration (the calibration run; the tuner's test never uses
# it) gives the engine's requests' TTFTs and TPOTs; the TTFT level is their q_ttft quantile and the TPOT
# level their q_tpot quantile, each q drawn uniformly from QUANTILES by ``slo_quantiles``. So some
# requests meet the levels today and some do not, on whatever CPU runs the report, and a change that cuts
# queueing or step time can raise goodput while one that adds to them can lower it. Fixed levels (the
# advisor's 1 s / 100 ms) were out of reach for every request on this 2-core CPU (seeds 97518, 99574,
# 480973: goodput 0 -> 0, nothing could move it); a multiple of one lone request's latency is no better,
# since a burst's TTFT is set by its queue, tens of lone TTFTs. --ttft-slo/--tpot-slo fix the levels instead.
QUANTILES = (0.5, 0.9)


def slo_quantiles(seed: int, workload: str) -> tuple[float, float]:
    """The quantiles (TTFT, TPOT) at which ``workload``'s levels are set: from their own generator, so the
    workloads a seed draws are the same as before the rule existed."""
    rng = random.Random(f"{seed}/{workload}/slo")
    return round(rng.uniform(*QUANTILES), 2), round(rng.uniform(*QUANTILES), 2)


def calibrate(row: dict, quantiles: tuple[float, float]) -> tuple[float, float]:
    """The levels from a calibration replay's ``ttfts`` and ``tpots``, at ``quantiles``, rounded up to the
    millisecond; where the replay has none (every request a cache hit, or one-token answers), the advisor's
    default."""
    from gateway.advise.replay import quantile

    out = []
    for xs, q, default in ((row.get("ttfts"), quantiles[0], TTFT_SLO), (row.get("tpots"), quantiles[1], TPOT_SLO)):
        x = quantile(list(xs or []), q)
        out.append(default if x is None else max(1e-3, math.ceil(x * 1e3) / 1e3))
    return out[0], out[1]


# ---------------------------------------------------------------- the judgement (plain data: tested alone)


def judge(tuning) -> dict:
    """A workload's verdict from the tuner's ``Tuning``: goodput before -> after of the recommendation
    (the means of its confirmation's replays: the current configuration's and the candidate's), the test's
    p-value and effect, and the issue's rule (``separation_ok``): wherever a leader's confirmation replays
    all beat the current configuration's, that leader (or one confirmed before it) is recommended."""
    from statistics import fmean

    rec = tuning.recommended
    confs = list(tuning.confirmations)
    passed = next((c for c in confs if c.passed), None)
    separated = next((c for c in confs if c.separated), None)
    separation_ok = separated is None or (passed is not None and confs.index(passed) <= confs.index(separated))
    before = fmean(passed.current_runs) if passed else tuning.baseline
    after = fmean(passed.candidate_runs) if passed else before
    current = next(r for r in tuning.rows if r.candidate.source == "current")
    tried = [r for r in tuning.rows if r.candidate.source != "current"]
    best = max(tried, key=lambda r: r.goodput, default=None)
    shown = passed or (min(confs, key=lambda c: c.p_value) if confs else None)
    return {
        "recommended": None if rec is None else rec.candidate.change,
        "goodput_before": round(before, 6),
        "goodput_after": round(after, 6),
        "goodput_rose": passed is not None and after > before,
        # the test of the recommendation, or (no recommendation) the confirmation that came closest
        "p_value": None if shown is None else shown.p_value,
        "effect": None if shown is None else shown.effect,
        "cliffs_delta": None if shown is None else shown.delta,
        "level": tuning.level,
        "latency_before": latency(current),
        "latency_after": latency(rec or current),
        "best_candidate": None if best is None else {"change": best.candidate.change, "goodput": best.goodput},
        "confirmations": [
            {
                "change": c.candidate.change,
                "current_runs": c.current_runs,
                "candidate_runs": c.candidate_runs,
                "p_value": c.p_value,
                "effect": c.effect,
                "cliffs_delta": c.delta,
                "passed": c.passed,
                "separated": c.separated,
            }
            for c in confs
        ],
        "candidates_replayed": len(tried),
        "candidates_not_replayed": len(tuning.not_replayed),
        "separation_ok": separation_ok,
        "current_runs": list(tuning.current_runs),
    }


def latency(row) -> dict:
    return {k: getattr(row, k) for k in ("ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s")}


def tiers_yaml(folder: Path) -> Path:
    """The gateway's tiers as a tiers file for the replay: prices, and ``tier=small`` runs SmolLM2."""
    import yaml

    path = folder / "tiers.yaml"
    path.write_text(yaml.safe_dump({"tiers": [{"name": n, "model": MODEL, "price": p} for n, p in PRICES.items()]}))
    return path


def tune_workload(
    shapes: list[dict],
    diagnose,
    base: dict,
    *,
    budget_s: float,
    tiers: Path | None = None,
    slo: tuple[float, float] | None = None,
    quantiles: tuple[float, float] = (0.5, 0.5),
    replayer=None,
) -> dict:
    """The service levels, then the tuner on the recording.

    ``slo`` (TTFT, TPOT seconds) fixes the levels; without it they are calibrated (``calibrate``): one
    replay of the current configuration, its TTFT and TPOT at ``quantiles``. ``diagnose``: the window's
    diagnosis, or a function of the levels that answers it (the report's: ``symptoms.report`` of the
    recorded metrics). Then the tuner (screening and confirmations, on ``Replayer``'s two open engines).
    ``replayer`` (tests: a
    fake with ``run(keys, tier_sets_model=, slo=)``) defaults to ``Replayer``."""
    from gateway.advise import tune

    if replayer is None:
        from gateway.advise.replay import TIERS, Replayer

        replayer = Replayer(shapes, *(slo or (TTFT_SLO, TPOT_SLO)), tiers=tiers or TIERS)
    runs: list[dict] = []
    calibration = None
    if slo is None:
        first = replayer.run(dict(base), tier_sets_model=True, slo=None)
        slo = calibrate(first, quantiles)
        calibration = {"quantiles": list(quantiles), "slo": list(slo), "wall_s": first.get("wall_s")}
    diagnosis = diagnose(slo) if callable(diagnose) else diagnose

    def replay(change: dict) -> dict:
        row = replayer.run({**base, **change}, tier_sets_model="model" not in change, slo=slo)
        runs.append({"change": change, **row})
        return row

    current = tune.settings_of(base)
    todo = tune.candidates(diagnosis["findings"], current)
    bar = tune.progress_bar(tune.SCREEN_RUNS + len(todo) + 2 * tune.CONFIRM_RUNS * min(tune.MAX_CONFIRM, len(todo)))
    try:
        tuning = tune.tune(diagnosis["findings"], replay, budget_s=budget_s, progress=bar, slo=slo, current=current)
    finally:
        bar.close()
        if hasattr(replayer, "close"):
            replayer.close()
    return {
        "slo": {"ttft_p99_s": slo[0], "tpot_p99_s": slo[1]},
        "calibration": calibration,
        "diagnosis": diagnosis,
        "top_finding": top_finding(diagnosis),
        "tuning": {**asdict(tuning), "verdict": tuning.verdict},
        "table": tune.table(tuning),
        "replays": [{"change": r["change"], "goodput": r["goodput"], "wall_s": r.get("wall_s")} for r in runs],
        **judge(tuning),
    }


def top_finding(diagnosis: dict) -> dict | None:
    findings = diagnosis["findings"]
    return None if not findings else {k: findings[0].get(k) for k in ("symptom", "cause", "key")}


# ---------------------------------------------------------------- the traffic, through a real gateway


def gateway_yaml(engine: dict, folder: Path) -> Path:
    tier = lambda name: {"name": name, "model": MODEL, "capacity": 256, "timeout_s": 600, "price": PRICES[name]}  # noqa: E731
    config = {
        "host": "127.0.0.1",
        "models": [{"name": MODEL, "preset": MODEL, "engine": engine}],
        "tiers": {"tiers": [tier("small"), tier("large")], "router": {"default": "small"}},
        "limits": {"default_max_tokens": 256},
        "cache": {"enabled": False, "store": "file", "path": str(folder / "cache.jsonl")},
        "record": {"path": str(folder / "shapes.jsonl")},
    }
    path = folder / "gateway.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


async def send(url: str, requests: list[Request]) -> dict:
    import aiohttp

    t0 = time.perf_counter()
    status: dict[int, int] = {}

    async def one(session, r: Request):
        await asyncio.sleep(max(0.0, r.t - (time.perf_counter() - t0)))
        body = {"model": r.tier, "messages": r.messages, "max_tokens": r.max_tokens, "min_tokens": r.max_tokens}
        async with session.post(url + "/v1/chat/completions", json={**body, "temperature": 0, "stream": True}) as resp:
            async for _ in resp.content:
                pass
            status[resp.status] = status.get(resp.status, 0) + 1

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1800)) as session:
        await asyncio.gather(*(one(session, r) for r in requests))
    return {"status": status, "seconds": round(time.perf_counter() - t0, 1)}


def diagnose_window(window: dict, slo: tuple[float, float]) -> dict:
    """The advisor's report over one recorded workload (``record``'s ``window``: ``/metrics`` before and
    after, the KV gauge's sampled peak, the seconds, the tiers' prices from ``/v1/models``) at ``slo``:
    the registry's change, KV usage at its sampled peak (as the dashboard's ``/dashboard/diagnosis``
    does). Kept apart from the recording so the levels can be calibrated after it."""
    from gateway.advise.metrics import parse, subtract
    from gateway.advise.symptoms import report

    delta = subtract(parse(window["after"]), parse(window["before"]))
    kv = delta["values"].setdefault("kv_cache_usage_perc", {})
    for labels, v in window["kv_peak"].items():
        kv[labels] = max(kv.get(labels, 0.0), v)
    return report(delta, window_s=window["seconds"], ttft_slo=slo[0], tpot_slo=slo[1], prices=window["prices"])


class KVSampler(threading.Thread):
    """``kv_cache_usage_perc`` read from ``/metrics`` every second: its peak per label set."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.peak, self.stop = url, {}, threading.Event()

    def run(self) -> None:
        from gateway.advise.metrics import parse

        while not self.stop.wait(1.0):
            try:
                for labels, v in parse(get(self.url + "/metrics"))["values"].get("kv_cache_usage_perc", {}).items():
                    self.peak[labels] = max(self.peak.get(labels, 0.0), v)
            except OSError:
                pass


def record(engine: dict, workloads: list[Workload], folder: Path) -> list[dict]:
    """Each workload through one gateway: its metrics window (``diagnose_window``'s) and its recording
    (``folder/NAME.jsonl``)."""
    from tests.support.processes import ServerProcess

    folder.mkdir(parents=True, exist_ok=True)
    shapes = folder / "shapes.jsonl"
    count = lambda: len(shapes.read_text().splitlines()) if shapes.exists() else 0  # noqa: E731
    out = []
    print(f"starting the gateway ({MODEL}, {engine})", file=sys.stderr)
    with ServerProcess(["-m", "gateway", "--config", str(gateway_yaml(engine, folder))], name="advisor") as gw:
        warm = [Request(0.0, [{"role": "user", "content": f"Warm-up {i}: hello"}], 4, "small") for i in range(3)]
        asyncio.run(send(gw.url, warm))  # a first request pays for lazy set-up
        for w in workloads:
            lines, before, started = count(), get(gw.url + "/metrics"), time.time()
            sampler = KVSampler(gw.url)
            sampler.start()
            sent = asyncio.run(send(gw.url, w.requests))
            time.sleep(1.5)  # the last answers recorded
            sampler.stop.set()
            sampler.join()
            after, seconds = get(gw.url + "/metrics"), time.time() - started
            cards = json.loads(get(gw.url + "/v1/models"))["data"]
            prices = {c["tier"]: c["price"]["output_per_mtok"] for c in cards if c.get("tier") and c.get("price")}
            window = {"before": before, "after": after, "kv_peak": sampler.peak, "seconds": seconds, "prices": prices}
            own = sorted((json.loads(x) for x in shapes.read_text().splitlines()[lines:]), key=lambda x: x["t"])
            t0 = own[0]["t"] if own else 0.0
            path = folder / f"{w.name}.jsonl"
            path.write_text("".join(json.dumps({**x, "t": round(x["t"] - t0, 4)}) + "\n" for x in own))
            print(f"[{w.name}] sent {sent}", file=sys.stderr)
            out.append({"sent": sent, "window": window, "recording": str(path)})
    return out


def run_seed(seed: int, count: int, budget_s: float, folder: Path, slo: tuple[float, float] | None = None) -> dict:
    """``slo`` fixes the levels; None calibrates them per workload (``slo_quantiles``, ``calibrate``)."""
    from gateway.advise.replay import replayable
    from runtime.platform import cpu_info

    engine, workloads = draw(seed, count)
    recorded = record(engine, workloads, folder)
    base = replay_keys(engine)
    rows = []
    for w, rec in zip(workloads, recorded):
        window = rec.pop("window")
        row = {"workload": w.name, "kind": w.kind, "params": w.params, **rec}
        shapes = replayable(rec["recording"], 200)
        started = time.monotonic()
        row |= tune_workload(
            shapes,
            lambda levels, window=window: diagnose_window(window, levels),
            base,
            budget_s=budget_s,
            tiers=tiers_yaml(folder),
            slo=slo,
            quantiles=slo_quantiles(seed, w.name),
        )
        row["tune_s"] = round(time.monotonic() - started, 1)
        print(f"[{w.name}] levels {row['slo']}\n{row['table']}", file=sys.stderr)
        rows.append(row)
        (folder / "rows.json").write_text(json.dumps(rows, indent=1, default=str))  # so far, should a later one fail
    levels = "" if slo is None else f" --ttft-slo {slo[0]:g} --tpot-slo {slo[1]:g}"
    return {
        "seed": seed,
        "command": f"python scripts/advisor_report.py --seed {seed} --workloads {count} --budget-s {budget_s:g}{levels}",
        "slo_rule": "fixed" if slo is not None else f"calibrated: quantiles drawn from {list(QUANTILES)}",
        "engine": engine,
        "cpu": cpu_info(),
        "rows": rows,
        "separation_ok": all(r["separation_ok"] for r in rows),
    }


# ---------------------------------------------------------------- output


def fmt(v, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def change_name(change: dict | None) -> str:
    return "no change" if not change else ", ".join(f"{k}={v}" for k, v in change.items())


def markdown(result: dict) -> str:
    """One seed's rows as the table docs/ADVISOR.md quotes."""
    engine = {k: v for k, v in result["engine"].items() if k not in ("background_compile", "prime_programs")}
    lines = [
        f"Seed {result['seed']}: engine `{json.dumps(engine)}`",
        "",
        "| workload | levels TTFT s / TPOT ms (quantiles) | top finding | recommended | goodput before -> after"
        " | p (level); effect; Cliff's delta | confirmation replays, current vs candidate"
        " | TTFT p50/p99 s before -> after | TPOT p50/p99 ms before -> after | rose | best screened (tried)"
        " | separation rule |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ms = lambda x: None if x is None else x * 1e3  # noqa: E731
    runs = lambda xs: ", ".join(f"{g:.2f}" for g in xs)  # noqa: E731
    for r in result["rows"]:
        top = "none" if r["top_finding"] is None else f"[{r['top_finding']['symptom']}] {r['top_finding']['cause']}"
        b, a = r["latency_before"], r["latency_after"]
        best = r["best_candidate"]
        best = "none replayed" if best is None else f"{change_name(best['change'])} {best['goodput']:.2f}"
        tried = sum(x["candidate"]["source"] != "current" for x in r["tuning"]["rows"])
        best += f" ({tried} of {tried + len(r['tuning']['not_replayed'])})"
        cal = r.get("calibration")
        levels = f"{r['slo']['ttft_p99_s']:.3g} / {r['slo']['tpot_p99_s'] * 1e3:.0f}"
        levels += "" if not cal else f" (q {cal['quantiles'][0]:.2f}, {cal['quantiles'][1]:.2f})"
        test = (
            "no leader"
            if r["p_value"] is None
            else f"{r['p_value']:.3f} ({r['level']:.3f}); {r['effect']:+.2f}; {r['cliffs_delta']:+.2f}"
        )
        confs = (
            "; ".join(
                f"{change_name(c['change'])}: {runs(c['current_runs'])} vs {runs(c['candidate_runs'])}"
                for c in r["confirmations"]
            )
            or "-"
        )
        judged = (
            "not judged" if not tried and r["tuning"]["not_replayed"] else "yes" if r["separation_ok"] else "**no**"
        )
        lines.append(
            f"| {r['workload']} ({r['kind']}) | {levels} | {top[:60]} | {change_name(r['recommended'])}"
            f" | {r['goodput_before']:.2f} -> {r['goodput_after']:.2f} | {test} | {confs}"
            f" | {fmt(b['ttft_p50_s'])}/{fmt(b['ttft_p99_s'])} -> {fmt(a['ttft_p50_s'])}/{fmt(a['ttft_p99_s'])}"
            f" | {fmt(ms(b['tpot_p50_s']), 0)}/{fmt(ms(b['tpot_p99_s']), 0)} ->"
            f" {fmt(ms(a['tpot_p50_s']), 0)}/{fmt(ms(a['tpot_p99_s']), 0)}"
            f" | {'yes' if r['goodput_rose'] else '**no**'}"
            f" | {best}"
            f" | {judged} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, required=True, help="draws the engine and the workloads")
    p.add_argument("--workloads", type=int, default=3, help="how many workloads the seed draws")
    p.add_argument("--budget-s", type=float, default=300.0, help="the tuner's search budget per workload")
    p.add_argument("--ttft-slo", type=float, help="seconds: fixes the levels (with --tpot-slo); else calibrated")
    p.add_argument("--tpot-slo", type=float, help="seconds: fixes the levels (with --ttft-slo); else calibrated")
    p.add_argument("--json-out", default=None, help="default docs/results/advisor_report_seed{N}.json")
    p.add_argument("--markdown", metavar="JSON", help="print the table of an earlier run's JSON instead")
    args = p.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())), end="")
        return 0
    fixed = (args.ttft_slo, args.tpot_slo)
    if (None in fixed and fixed != (None, None)) or any(x is not None and x <= 0 for x in fixed):
        print("error: --ttft-slo and --tpot-slo go together, each > 0", file=sys.stderr)
        return 2
    if args.workloads < 1 or args.budget_s <= 0:
        print("error: --workloads must be >= 1, --budget-s > 0", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix=f"advisor-seed{args.seed}-"))
    print(f"work folder: {folder}", file=sys.stderr)
    result = run_seed(args.seed, args.workloads, args.budget_s, folder, None if fixed == (None, None) else fixed)
    out = Path(args.json_out or ROOT / "docs" / "results" / f"advisor_report_seed{args.seed}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    print(markdown(result), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
