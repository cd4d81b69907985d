"""Which JAX serves faster on this CPU (issue 47, item 4): jax 0.10.2 (Python 3.11, ``.venv``) against the
newest JAX (0.12.0.1 on Python 3.13, ``.venvs/py313``), the same code, the same machine, one run.

In: the two venvs (``make install``, ``make install PYTHON=python3.13``). Out: one JSON (``--out``, default
``docs/results/bench_jax_versions.json``) with every run, the medians per version, the ratios newest / 0.10.2 and
the CPU; a line per run on stderr.

What runs, interleaved so that a change in the machine's load hits both versions alike:

1. ``scripts/bench_generate.py`` (batch-1 decode, SmolLM2, ``--weight-quant`` modes, default ``none,int8``; no
   peers) under each venv's Python, ``--rounds`` times in the order A B, B A, A B, ...: tokens/s and TTFT per mode.
2. The served benchmark: ``make serve``'s gateway (``configs/gateway.yaml``, its int8 SmolLM2; ``--no-cache``, so
   every request reaches the engine) under each Python in turn, each started, its background compiles waited
   for, one warm-up run, then ``scripts/bench_serving.py``'s workload at each ``--rates`` with ``--seeds`` fresh
   seeds (no repeats, temperature 0; ``bench_vs_llama_server.py``'s runs): TPOT, TTFT and ITL p50 / p99,
   output tokens/s and goodput, medians over seeds. The second server runs the same seeds as the first.

Nothing else should run on the machine meanwhile: both want both cores.

    python scripts/bench_jax_versions.py [--rounds 2] [--rates 1,2,4] [--seeds 2] [--num-prompts 30]
        [--weight-quant none,int8] [--tokens 64] [--skip-serving] [--served-order ab|abba]
        [--out docs/results/bench_jax_versions.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

VENVS = {"old": ROOT / ".venv" / "bin" / "python", "new": ROOT / ".venvs" / "py313" / "bin" / "python"}
GENERATE_FIGURES = ("tok_s", "ttft_ms")


def versions(python: Path) -> dict:
    """The interpreter's Python and JAX versions (run in it)."""
    code = "import sys, json, jax, jaxlib; print(json.dumps({'python': sys.version.split()[0], 'jax': jax.__version__, 'jaxlib': jaxlib.__version__}))"
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def generate_run(python: Path, modes: str, tokens: int) -> dict:
    """One bench_generate.py run under ``python``: its per-mode figures."""
    cmd = [str(python), "scripts/bench_generate.py", "--no-hf", "--no-llama-cpp", "--weight-quant", modes]
    cmd += ["--tokens", str(tokens)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {m: {k: r[k] for k in GENERATE_FIGURES} for m, r in result["weight_quant"].items()}


def order(rounds: int) -> list[str]:
    """A B, B A, A B, ...: each version first in half the rounds."""
    out = []
    for i in range(rounds):
        out += ["old", "new"] if i % 2 == 0 else ["new", "old"]
    return out


def median_of(runs: list[dict], keys: tuple[str, ...]) -> dict:
    return {k: round(statistics.median(r[k] for r in runs), 3) for k in keys if all(r.get(k) is not None for r in runs)}


def ratio(new: dict, old: dict) -> dict:
    return {k: round(new[k] / old[k], 3) for k in new if k in old and old[k]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=2, help="bench_generate runs per version (alternating order)")
    p.add_argument("--weight-quant", default="none,int8")
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--rates", default="1,2,4", help="served request rates, req/s")
    p.add_argument("--seeds", type=int, default=2, help="served runs (fresh seeds) per rate")
    p.add_argument("--num-prompts", type=int, default=30)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per served request")
    p.add_argument("--skip-serving", action="store_true")
    p.add_argument(
        "--served-order",
        choices=["ab", "abba"],
        default="ab",
        help="ab: each version's gateway once, in turn; abba: the seeds split in two, old new then new old",
    )
    p.add_argument("--out", default=str(ROOT / "docs" / "results" / "bench_jax_versions.json"))
    args = p.parse_args(argv)
    missing = [str(v) for v in VENVS.values() if not v.exists()]
    if missing:
        p.error(f"missing {', '.join(missing)}: make install; make install PYTHON=python3.13")
    from runtime.platform import cpu_info

    info = {name: versions(py) for name, py in VENVS.items()}
    label = {name: f"jax {v['jax']} (Python {v['python']})" for name, v in info.items()}
    report: dict = {
        "what": "the same code under jax 0.10.2 and the newest JAX: batch-1 decode and the served benchmark",
        "versions": {label[k]: v for k, v in info.items()},
        "cpu": {k: v for k, v in cpu_info().items() if k != "flags"},
        "command": "python scripts/bench_jax_versions.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
    }

    gen_runs: dict[str, list[dict]] = {"old": [], "new": []}
    for i, name in enumerate(order(args.rounds)):
        t0 = time.perf_counter()
        figures = generate_run(VENVS[name], args.weight_quant, args.tokens)
        gen_runs[name].append(figures)
        print(
            f"[{i + 1}/{2 * args.rounds}] bench_generate, {label[name]}: {figures} ({time.perf_counter() - t0:.0f} s)",
            file=sys.stderr,
        )
    modes = list(gen_runs["old"][0])
    gen = {"runs": {label[k]: v for k, v in gen_runs.items()}, "medians": {}, "ratio_new_over_old": {}}
    for mode in modes:
        med = {k: median_of([r[mode] for r in gen_runs[k]], GENERATE_FIGURES) for k in VENVS}
        gen["medians"][mode] = {label[k]: v for k, v in med.items()}
        gen["ratio_new_over_old"][mode] = ratio(med["new"], med["old"])
    report["batch1_decode"] = gen

    if not args.skip_serving:
        import bench_vs_llama_server as served

        from tests.support.processes import ServerProcess

        rates = [float(r) for r in args.rates.split(",") if r.strip()]
        plan = served.run_seeds(rates, args.seeds)
        serving: dict = {
            "config": "configs/gateway.yaml --no-cache",
            "rates": rates,
            "seeds_per_rate": args.seeds,
            "num_prompts": args.num_prompts,
            "servers": {},
        }
        # --served-order abba: the seeds in two halves, the gateways started old, new, then new, old, so a drift in
        # the machine's load over the served part hits both versions alike (each start has its own warm-up)
        halves = [plan] if args.served_order == "ab" else [plan[0::2], plan[1::2]]
        sessions: dict[str, list[dict]] = {"old": [], "new": []}
        for i, half in enumerate(halves):
            for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
                proc = ServerProcess(
                    ["-m", "gateway", "--config", "configs/gateway.yaml", "--no-cache"],
                    name="gateway",
                    program=str(VENVS[name]),
                    ready_timeout=900,
                )
                sessions[name].append(served.bench_server(label[name], proc, "auto", half, args))
        for name, runs in sessions.items():
            merged = [r for session in runs for r in session["runs"]]
            serving["servers"][label[name]] = {
                "sessions": [{k: v for k, v in session.items() if k not in ("runs", "medians")} for session in runs],
                "runs": merged,
                "medians": served.medians(merged),
            }
        serving["order"] = args.served_order
        med = {k: serving["servers"][label[k]]["medians"] for k in VENVS}
        figures = {
            k: {
                rate: {m: v for m, v in ms.items() if m in served.METRICS and v is not None}
                for rate, ms in med[k].items()
            }
            for k in VENVS
        }
        serving["ratio_new_over_old"] = {rate: ratio(figures["new"][rate], figures["old"][rate]) for rate in med["old"]}
        report["served"] = serving

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(
        json.dumps(
            {"batch1_decode": gen["ratio_new_over_old"], "served": report.get("served", {}).get("ratio_new_over_old")}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
