"""The advisor's decision rule measured in both directions: planted nulls and planted gains on recorded workloads.

    python scripts/advisor_power.py [--seed 424242] [--workloads 2] [--pool 8] [--delays-ms 10,30]
                                    [--trials 2000] [--out docs/results/advisor_power.json]
    python scripts/advisor_power.py --from-json docs/results/advisor_power.json   # the trials again, no replays

1. **Recorded workloads.** ``--seed`` draws a deployment and ``--workloads`` workloads exactly as
   ``scripts/advisor_report.py`` does, and each goes through a real ``python -m gateway`` process; the
   recorder's lines are the recordings. Per workload the service levels are calibrated as the report
   does (one replay at the quantiles the seed draws).
2. **Pools of real replays.** On one engine (the drawn configuration), ``--pool`` replays of each arm,
   round-robin so that a drifting machine hits every arm alike: ``fast`` (the engine as it is) and
   ``slow{d}`` for each ``--delays-ms`` d (the same engine with d ms of sleep added before every step: a
   slower replica by construction, which can only do worse). The planted gain of a scenario is measured,
   not assumed: the mean goodput of ``fast``'s pool minus the slow arm's.
3. **Trials.** ``gateway.advise.tune.tune`` itself (screening, leaders, confirmation, the permutation
   test) runs ``--trials`` times per scenario on a replay that answers each call with a random draw from
   the pool of the arm it names (with replacement, a generator seeded per scenario):
     - ``null``: the current configuration is ``fast``; two candidates, each ``fast`` again under another
       name. Every recommendation is a false one.
     - ``gain{d}``: the current configuration is ``slow{d}``; the candidates are ``fast`` (the planted gain)
       and ``slow{d}`` under another name (a planted null beside it). Recommending ``fast`` is right;
       recommending the other is a false recommendation.
   Draws with replacement from one pool are exchangeable, so under a null the test's guarantee applies
   exactly; ties (a pool of few distinct goodputs) make it conservative. What the trials do not carry is
   the drift between replays of a real search (the pools are interleaved, so drift is spread, not
   removed).

Writes one JSON (the pools, each scenario's planted gain, recommendation rates with 95% Clopper-Pearson
intervals, the CPU) and a PNG of the rate of recommending against the planted gain.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.advise import tune  # noqa: E402

FINDINGS = {  # proposals over one key that no engine has: candidates() gives exactly these, no neighbours
    "null": [{"proposal": {"arm": "twin_a"}}, {"proposal": {"arm": "twin_b"}}],
    "gain": [{"proposal": {"arm": "fast"}}, {"proposal": {"arm": "twin"}}],
}


def interval(k: int, n: int, conf: float = 0.95) -> list[float]:
    """Two-sided Clopper-Pearson interval of k of n."""
    from scipy.stats import beta

    a = (1 - conf) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return [round(lo, 4), round(hi, 4)]


class PoolReplay:
    """``replay(change)`` for ``tune``: a draw from the pool that the change names (``arm``; none: current)."""

    def __init__(self, pools: dict[str, list[float]], current: str, twins: dict[str, str], rng: random.Random):
        self.pools, self.current, self.twins, self.rng = pools, current, twins, rng
        self.now = 0.0
        self.calls = 0

    def __call__(self, change: dict) -> dict:
        self.now += 1.0
        self.calls += 1
        arm = self.twins.get(change.get("arm"), change.get("arm")) if change else self.current
        g = self.rng.choice(self.pools[arm])
        side = {"p50": 0.1, "p99": 0.2}
        return {"goodput": g, "ttft_s": side, "tpot_s": side, "output_tokens_per_s": 1.0, "cost_usd": 0.0}


def trials(pools: dict[str, list[float]], scenario: str, n: int, seed: int, alpha: float = tune.ALPHA) -> dict:
    """``n`` runs of ``tune.tune`` on draws from ``pools``: how often it recommended the planted gain, how
    often a null (a configuration no better than the current one)."""
    rng = random.Random(f"{seed}/{scenario}")
    if scenario == "null":
        current, twins, findings, right = "fast", {"twin_a": "fast", "twin_b": "fast"}, FINDINGS["null"], None
    else:
        slow = scenario.replace("gain", "slow")
        current, twins, findings, right = slow, {"twin": slow}, FINDINGS["gain"], "arm=fast"
    gain = false = 0
    replays, ps = [], []
    for _ in range(n):
        fake = PoolReplay(pools, current, twins, rng)
        t = tune.tune(findings, fake, budget_s=1e12, clock=lambda fake=fake: fake.now, alpha=alpha)
        replays.append(fake.calls)
        name = None if t.recommended is None else t.recommended.candidate.name
        gain += name is not None and name == right
        false += name is not None and name != right
        ps += [c.p_value for c in t.confirmations if c.candidate.name == right]
    out = {
        "scenario": scenario,
        "current": current,
        "trials": n,
        "false_recommendations": false,
        "false_rate": round(false / n, 4),
        "false_rate_ci95": interval(false, n),
        "replays_per_trial_median": statistics.median(replays),
    }
    if right is not None:
        out |= {
            "planted_gain": round(statistics.fmean(pools["fast"]) - statistics.fmean(pools[current]), 4),
            "recommended_gain": gain,
            "power": round(gain / n, 4),
            "power_ci95": interval(gain, n),
            "median_p_of_the_gain": statistics.median(ps) if ps else None,
        }
    return out


# ---------------------------------------------------------------- the pools: real replays on recorded workloads


def slowed(engine, delay_s: float):
    """``engine`` whose every step sleeps ``delay_s`` first (an instance attribute over the method); undo()."""
    step = type(engine).step

    def slow_step(*a, **kw):
        time.sleep(delay_s)
        return step(engine, *a, **kw)

    engine.step = slow_step if delay_s > 0 else step.__get__(engine)
    return engine


def pools_for(shapes: list[dict], keys: dict, slo: tuple[float, float], delays_ms: list[int], pool: int, tiers) -> dict:
    """``pool`` replays of each arm, round-robin on one engine: fast and slow{d}."""
    from gateway.advise.replay import SPECIAL, read_tiers, replay
    from runtime.api import EngineConfig
    from runtime.replay import open_engine

    prices, _ = read_tiers(tiers)
    config = EngineConfig(**{"prime_programs": True, **{k: v for k, v in keys.items() if k not in SPECIAL}})
    engine = open_engine(config, warmup=True)
    arms = {"fast": 0.0, **{f"slow{d}": d / 1e3 for d in delays_ms}}
    out: dict[str, list[float]] = {a: [] for a in arms}
    walls: dict[str, list[float]] = {a: [] for a in arms}
    for i in range(pool):
        for arm, delay in arms.items():
            slowed(engine, delay)
            row = replay(shapes, config, time_scale=1.0, ttft_slo=slo[0], tpot_slo=slo[1], prices=prices, engine=engine)
            out[arm].append(round(row["goodput"], 6))
            walls[arm].append(round(row["wall_s"], 2))
            print(f"  pool {i + 1}/{pool} {arm}: goodput {row['goodput']:.3f} ({row['wall_s']:.1f} s)", file=sys.stderr)
    slowed(engine, 0.0)
    return {"pools": out, "wall_s": walls}


def record_workloads(seed: int, count: int, folder: Path) -> tuple[dict, list]:
    from tests.support.scripts import load_script

    report = load_script("advisor_report")
    engine, workloads = report.draw(seed, count)
    recorded = report.record(engine, workloads, folder)
    return {"report": report, "engine": engine}, list(zip(workloads, recorded))


def measure(args) -> dict:
    from gateway.advise.replay import Replayer, replayable

    folder = Path(tempfile.mkdtemp(prefix=f"advisor-power-{args.seed}-"))
    print(f"work folder: {folder}", file=sys.stderr)
    ctx, recorded = record_workloads(args.seed, args.workloads, folder)
    report = ctx["report"]
    keys = report.replay_keys(ctx["engine"])
    tiers = report.tiers_yaml(folder)
    out = []
    for w, rec in recorded:
        shapes = replayable(rec["recording"], 200)
        cal = Replayer(shapes, 1.0, 0.1, tiers=tiers)
        first = cal.run(dict(keys), tier_sets_model=True)
        cal.close()
        slo = report.calibrate(first, report.slo_quantiles(args.seed, w.name))
        print(f"[{w.name}] ({w.kind}, {len(shapes)} requests) levels {slo}", file=sys.stderr)
        measured = pools_for(shapes, keys, slo, args.delays_ms, args.pool, tiers)
        out.append({"workload": w.name, "kind": w.kind, "requests": len(shapes), "slo": list(slo), **measured})
        (folder / "pools.json").write_text(json.dumps(out, indent=1))
    return {
        "seed": args.seed,
        "engine": ctx["engine"],
        "delays_ms": args.delays_ms,
        "pool": args.pool,
        "workloads": out,
    }


def judge_all(measured: dict, n: int, alpha: float) -> list[dict]:
    rows = []
    for w in measured["workloads"]:
        for scenario in ["null"] + [f"gain{d}" for d in measured["delays_ms"]]:
            r = trials(w["pools"], scenario, n, measured["seed"], alpha)
            rows.append({"workload": w["workload"], "kind": w["kind"], **r})
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def plot(rows: list[dict], alpha: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    gains = [r for r in rows if "power" in r]
    ax.errorbar(
        [r["planted_gain"] for r in gains],
        [r["power"] for r in gains],
        yerr=[[r["power"] - r["power_ci95"][0] for r in gains], [r["power_ci95"][1] - r["power"] for r in gains]],
        fmt="o",
        label="planted gain recommended",
    )
    nulls = [r for r in rows if r["scenario"] == "null"]
    ax.scatter(
        [0.0] * len(nulls), [r["false_rate"] for r in nulls], marker="x", color="C3", label="planted null recommended"
    )
    ax.axhline(alpha, color="C3", linestyle=":", label=f"alpha {alpha}")
    ax.axhline(0.8, color="C2", linestyle=":", label="target 0.8")
    ax.axvline(0.2, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("planted goodput gain (fast pool mean - slow pool mean)")
    ax.set_ylabel("share of trials recommending it")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(loc="center right", fontsize=8)
    n = tune.CONFIRM_RUNS
    ax.set_title(f"advisor: screening, then {n} + {n} confirmation replays, permutation test", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=424242)
    p.add_argument("--workloads", type=int, default=2)
    p.add_argument("--pool", type=int, default=8, help="real replays per arm and workload")
    p.add_argument("--delays-ms", default="10,30", help="the slow arms: ms of sleep added before each engine step")
    p.add_argument("--trials", type=int, default=2000)
    p.add_argument("--alpha", type=float, default=tune.ALPHA)
    p.add_argument("--out", default=str(ROOT / "docs" / "results" / "advisor_power.json"))
    p.add_argument("--from-json", help="reuse an earlier run's pools (no replays): the trials only")
    args = p.parse_args(argv)
    try:
        args.delays_ms = [int(x) for x in str(args.delays_ms).split(",") if x.strip()]
    except ValueError:
        print("error: --delays-ms wants integers, e.g. 10,30", file=sys.stderr)
        return 2
    if args.pool < 2 or args.trials < 1 or not args.delays_ms or min(args.delays_ms) <= 0:
        print("error: --pool >= 2, --trials >= 1, --delays-ms > 0", file=sys.stderr)
        return 2
    from runtime.platform import cpu_info

    started = time.time()
    pools_by = None
    if args.from_json:
        earlier = json.loads(Path(args.from_json).read_text())
        measured, pools_by = earlier["measured"], earlier.get("pools_measured_by") or earlier.get("command")
    else:
        measured = measure(args)
    rows = judge_all(measured, args.trials, args.alpha)
    big = [r for r in rows if "power" in r and r["planted_gain"] >= 0.2]
    result = {
        "command": "python scripts/advisor_power.py " + " ".join(sys.argv[1:] if argv is None else argv),
        # the run that replayed the pools (this one, or the one --from-json read them from)
        "pools_measured_by": pools_by
        or "python scripts/advisor_power.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "rule": {
            "alpha": args.alpha,
            "screen_runs": tune.SCREEN_RUNS,
            "confirm_runs": tune.CONFIRM_RUNS,
            "max_confirm": tune.MAX_CONFIRM,
            "level": args.alpha / tune.MAX_CONFIRM,
        },
        "cpu": cpu_info(),
        "seconds": round(time.time() - started, 1),
        "rows": rows,
        "summary": {
            "false_rate_max": max(r["false_rate"] for r in rows),
            "false_rate_all": round(sum(r["false_recommendations"] for r in rows) / sum(r["trials"] for r in rows), 4),
            "power_at_gain_0.2_or_more_min": min((r["power"] for r in big), default=None),
            "scenarios_with_gain_0.2_or_more": len(big),
        },
        "measured": measured,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    plot(rows, args.alpha, out.with_suffix(".png"))
    print(json.dumps({k: result[k] for k in ("rule", "summary", "rows")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
