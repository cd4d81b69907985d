"""Every optimization with its before and after, measured side by side in one run: docs/BENCHMARKS.md.

Runs the benchmark scripts (each compares its pair within one run, on the same workload), collects
their JSON, and writes a table (before, after, ratio), a summary plot, each script's own plots and
the raw JSON:

    pair                              script                 before -> after
    continuous vs static batching     bench_engine.py        static tok/s -> continuous tok/s
    paged vs contiguous KV            bench_engine.py        requests in one KV budget, KV waste
    semantic cache on vs off          bench_cache.py         miss latency -> hit latency
                                      bench_tiers.py         auto -> auto + cache: cost, latency
    routing vs all-large              bench_tiers.py         all-large -> auto: cost, latency
    prefix caching on vs off          bench_prefix.py        TTFT behind a shared 1,024-token system prompt
    (peer) engine vs HF generate()    bench_engine.py        HF tok/s -> ours (not in --quick)

    KV-cache quantization             bench_kv_quant.py      concurrent requests in one KV byte budget
    weight quantization               bench_generate.py      batch-1 decode tok/s, int8 / int4 vs float32
    prefill/decode disaggregation     bench_disagg.py        colocated -> split: streams' inter-token p99, long-prompt TTFT
    cache shared by gateway replicas  bench_replicas.py      miss on replica B -> hit on B of an answer cached through A

``--quick`` shrinks every workload to CI size (a few minutes; the figures are then noisy).
``--from DIR`` rebuilds the report from an earlier run's raw JSON without measuring again.

    python scripts/bench_report.py [--quick] [--out docs] [--from out/report]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _jsonl(text: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def run_all(raw: Path, quick: bool) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    runs = {
        "bench_engine": [py, "scripts/bench_engine.py", "--out", str(raw / "bench_engine")]
        + (
            ["--requests", "48", "--batch", "16", "--sweep", "1,16", "--sweep-requests", "16", "--skip-hf"]
            if quick
            else []
        ),
        "bench_cache": [py, "scripts/bench_cache.py"]
        + (
            ["--misses", "6", "--repeats", "4", "--clients", "16", "--seconds", "3", "--max-tokens", "48"]
            if quick
            else []
        ),
        "bench_tiers": [py, "scripts/bench_tiers.py", "--out", str(raw / "bench_tiers.json")]
        + (["--requests", "40", "--concurrency", "8", "--max-tokens", "16"] if quick else []),
        "bench_prefix": [py, "scripts/bench_prefix.py", "--out", str(raw / "bench_prefix.json")]
        + (["--chats", "4"] if quick else []),
    }
    runs["bench_kv_quant"] = [py, "scripts/bench_kv_quant.py", "--out", str(raw / "bench_kv_quant.json")] + (
        ["--kv-dtypes", "float32,int8"] if quick else []
    )
    runs["bench_generate"] = [py, "scripts/bench_generate.py"] + (["--no-hf", "--prompts", "2"] if quick else [])
    runs["eval_quality"] = [py, "scripts/eval_quality.py", "--out", str(raw / "eval_quality.json")] + (
        ["--weights", "none,int8", "--kv", "float32,int8"] if quick else []
    )
    runs["bench_disagg"] = [py, "scripts/bench_disagg.py", "--pin", "--out", str(raw / "bench_disagg.json")] + (
        ["--long", "2", "--repeats", "1"] if quick else []
    )
    runs["bench_replicas"] = [py, "scripts/bench_replicas.py", "--out", str(raw / "bench_replicas.json")] + (
        ["--entries", "8"] if quick else ["--entries", "30"]
    )
    for name, cmd in runs.items():
        print(f"== {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        (raw / f"{name}.stdout.jsonl").write_text(r.stdout)
        if name == "bench_generate":
            (raw / "bench_generate.json").write_text(r.stdout)
        print(f"== {name}: exit {r.returncode} in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        if r.returncode != 0:
            raise SystemExit(f"{name} failed (exit {r.returncode}); its output is in {raw}")


def _by(rows: list[dict], bench: str, **match) -> dict | None:
    return next((r for r in rows if r.get("bench") == bench and all(r.get(k) == v for k, v in match.items())), None)


def _json(path: Path):
    return json.loads(path.read_text()) if path.exists() else None


def _benches(path: Path) -> dict[str, dict]:
    """A script's JSON lines by their "bench" (the first line of each), {} when it has not run."""
    rows = _jsonl(path.read_text()) if path.exists() else []
    return {bench: _by(rows, bench) for bench in dict.fromkeys(r.get("bench") for r in rows)}


def recorded_cpus(raw: Path) -> list[dict]:
    """The distinct ``"cpu"`` records (runtime.platform.cpu_info) in the run folder's JSON and JSON lines;
    [] for raw output that predates them."""
    seen: dict[str, dict] = {}
    for f in sorted([*raw.glob("*.json"), *raw.glob("*.jsonl")]):
        text = f.read_text()
        try:
            doc = json.loads(text)
            records = doc if isinstance(doc, list) else [doc]
        except json.JSONDecodeError:
            records = _jsonl(text)
        for r in records:
            if isinstance(r, dict) and isinstance(r.get("cpu"), dict):
                seen.setdefault(json.dumps(r["cpu"], sort_keys=True), r["cpu"])
    return list(seen.values())


def describe_cpu(cpu: dict) -> str:
    simd = " ".join(cpu.get("simd_flags") or []) or "none named"
    return (
        f"{cpu.get('model') or 'unknown model'}, {cpu.get('logical_cores')} logical cores, {cpu.get('machine')}, "
        f"kernel ISA path {cpu.get('isa_path')}, SIMD: {simd}"
    )


def _dig(record: dict, path: tuple[str, ...]):
    for key in path:
        record = record[key]
    return record


def collect(raw: Path) -> list[dict]:
    """Rows of the table: pair, metric, before, after, unit, gain (after over before, > 1 is better)."""
    rows: list[dict] = []

    def add(pair, metric, before, after, unit, source):
        # Rates (tok/s, requests) are better higher; latency, cost and waste (ms, USD, %) lower.
        higher_is_better = unit in ("tok/s", "requests")
        gain = (after / before if higher_is_better else before / after) if before and after else None
        row = {"pair": pair, "metric": metric, "before": before, "after": after, "unit": unit, "gain": gain}
        rows.append({**row, "source": source})

    def compare(source, records, before, after, pair, metrics):
        """``records[before]`` -> ``records[after]``, when both are there: a row per (metric, path, unit),
        the path a tuple of keys into each."""
        if records and records.get(before) is not None and records.get(after) is not None:
            for metric, path, unit in metrics:
                add(pair, metric, _dig(records[before], path), _dig(records[after], path), unit, source)

    engine, src = _benches(raw / "bench_engine.stdout.jsonl"), "bench_engine.py"
    if c := engine.get("continuous_vs_static"):
        metric = f"throughput, {c['requests']} requests, batch {c['batch']}"
        add("continuous vs static batching", metric, c["static_tok_s"], c["continuous_tok_s"], "tok/s", src)
    if p := engine.get("paged_vs_contiguous"):
        budget = f"concurrent requests in {p['kv_budget_tokens']} KV tokens"
        waste = f"KV slots allocated but empty (block size {p['block_size']})"
        add(
            "paged vs contiguous KV", budget, p["max_concurrent_contiguous"], p["max_concurrent_paged"], "requests", src
        )
        add("paged vs contiguous KV", waste, p["contiguous_waste_pct"], p["paged_waste_pct"], "%", src)
    if h := engine.get("engine_vs_hf"):
        metric = f"throughput, {h['requests']} requests"
        add("peer: this engine vs HF generate()", metric, h["hf_tok_s"], h["ours_tok_s"], "tok/s", src)
    cache = _benches(raw / "bench_cache.stdout.jsonl")
    for kind in ("exact_hit", "semantic_hit"):
        metrics = [(f"latency p50, {kind.replace('_', ' ')} vs miss", ("p50_ms",), "ms")]
        compare("bench_cache.py", cache, "miss", kind, "semantic cache on vs off", metrics)
    tiers = _json(raw / "bench_tiers.json")
    modes = tiers and {m["mode"]: m for m in tiers["modes"]}
    cost, p50 = ("cost_per_1k_requests_usd",), ("latency_ms", "p50")
    metrics = [("cost per 1,000 requests", cost, "USD"), ("latency p50", p50, "ms")]
    compare("bench_tiers.py", modes, "all-large", "auto", "routing vs all-large", metrics)
    metrics = [("cost per 1,000 requests (auto routing)", cost, "USD"), ("latency p50 (auto routing)", p50, "ms")]
    compare("bench_tiers.py", modes, "auto", "auto+cache", "semantic cache on vs off", metrics)
    kvq = _json(raw / "bench_kv_quant.json")
    for dt in ("bfloat16", "int8"):
        metric = f"concurrent requests in one KV budget, {dt} vs float32 KV"
        metrics = [(metric, ("max_concurrent_requests",), "requests")]
        compare("bench_kv_quant.py", kvq and kvq["kv_dtypes"], "float32", dt, "KV-cache quantization", metrics)
    gen_file = raw / "bench_generate.json"
    if gen_file.exists():
        run = next((r for r in _jsonl(gen_file.read_text()) if "weight_quant" in r), {})
        by = run.get("weight_quant", {})
        for q in ("int8", "int4", "gguf"):
            metrics = [(f"batch-1 decode, {q} vs float32 weights", ("tok_s",), "tok/s")]
            compare("bench_generate.py", by, "none", q, "weight quantization", metrics)
        llama = run.get("llama_cpp", {})
        if "tok_s" in llama:  # the peer: llama.cpp on the same file, same prompt ids, same run
            for q, r in by.items():
                metric = (
                    f"batch-1 decode, ours ({q} weights) vs llama.cpp ({llama['threads']} threads, the file's blocks)"
                )
                add("peer: this engine vs llama.cpp", metric, llama["tok_s"], r["tok_s"], "tok/s", "bench_generate.py")
    if pre := _json(raw / "bench_prefix.json"):
        metrics = [(f"TTFT p50, {pre['system_prompt_tokens']}-token shared system prompt", ("ttft_ms_p50",), "ms")]
        compare("bench_prefix.py", pre, "off", "on", "prefix caching", metrics)
    # On one 2-core host the split buys the decode tail and costs TTFT: both shown.
    disagg, pair = _json(raw / "bench_disagg.json"), "prefill/decode disaggregation"
    metrics = [
        ("decode streams' inter-token latency p99 under long-prompt arrivals", ("stream", "itl_ms", "p99"), "ms"),
        ("long-prompt TTFT p50 (one host: each role on half the cores)", ("long", "ttft_ms", "p50"), "ms"),
    ]
    compare("bench_disagg.py", disagg, "colocated", "disaggregated", pair, metrics)
    if r := _json(raw / "bench_replicas.json"):
        metric = (
            f"answer on replica B, p50 ({r['gateways']} gateways, one Redis; "
            f"{r['cross_replica_hits']}/{r['entries_stored']} hits)"
        )
        before, after = r["miss_answer_ms_p50"], r["hit_answer_ms_p50"]
        add("cache shared by gateway replicas", metric, before, after, "ms", "bench_replicas.py")
    return rows


def _fmt(v, unit: str) -> str:
    if v is None:
        return "–"
    if unit == "USD":
        return f"${v:.4f}"
    if isinstance(v, float) and v >= 100:
        return f"{v:,.0f} {unit}"
    return f"{v:.3g} {unit}" if isinstance(v, float) else f"{v} {unit}"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r["gain"]]
    fig, ax = plt.subplots(figsize=(14, 0.45 * len(shown) + 1.2))
    labels = [textwrap.shorten(f"{r['pair']}: {r['metric']}", 80, placeholder="...") for r in shown]
    # bars grow from 1x (no change): right for a gain, left for a loss
    ax.barh(labels, [r["gain"] - 1 for r in shown], left=1, color=["#3a7" if r["gain"] >= 1 else "#c44" for r in shown])
    ax.axvline(1, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlim(min(0.3, min(r["gain"] for r in shown) / 2), max(r["gain"] for r in shown) * 8)  # room for the labels
    ax.set_xlabel("after vs before (x better, log scale)")
    for y, r in enumerate(shown):
        ax.text(r["gain"], y, f" {r['gain']:.2f}x", va="center", fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")


def write(
    rows: list[dict], raw: Path, out: Path, quick: bool, note: str | None = None, cpus: list[dict] | None = None
) -> Path:
    assets = out / "benchmarks"
    assets.mkdir(parents=True, exist_ok=True)
    for f in list(raw.glob("*.json")) + list(raw.glob("*.jsonl")) + list(raw.rglob("*.png")):
        shutil.copy(f, assets / f.name)
    plot(rows, assets / "summary.png")
    (assets / "report.json").write_text(json.dumps(rows, indent=2))
    cpu = (
        "; ".join(describe_cpu(c) for c in cpus)
        if cpus
        else 'CPU not recorded: the raw files predate the scripts\' "cpu" record'
    )
    lines = [
        "# Benchmarks: every optimization, before and after",
        "",
        f"Generated by `python scripts/bench_report.py{' --quick' if quick else ''}` on "
        f"{time.strftime('%Y-%m-%d')} ({platform.system()}; measured on: {cpu}. The machine is shared "
        "and has no accelerator, so read the ratios, which are measured within one run, rather than "
        "the absolute figures)." + (" **Quick mode**: CI-sized workloads, noisy figures." if quick else ""),
        "",
        *([note, ""] if note else []),
        "| optimization | metric | before | after | after vs before | measured by |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        gain = f"**{r['gain']:.2f}x**" if r["gain"] else "–"
        lines.append(
            f"| {r['pair']} | {r['metric']} | {_fmt(r['before'], r['unit'])} | "
            f"{_fmt(r['after'], r['unit'])} | {gain} | `scripts/{r['source']}` |"
        )
    lines += [
        "",
        '"After vs before" is how many times better the optimization makes the metric (higher throughput, or '
        "lower latency, cost or waste).",
        "",
        "![summary](benchmarks/summary.png)",
        "",
    ]
    for png in sorted(assets.glob("*.png")):
        if png.name != "summary.png":
            lines += [f"![{png.stem}](benchmarks/{png.name})", ""]
    quality = raw / "eval_quality.json"
    if quality.exists():
        q = json.loads(quality.read_text())
        lines += [
            "## What each precision costs in quality",
            "",
            f"`scripts/eval_quality.py`: {q['model']} on `{q['corpus']}` ({len(q['documents'])} documents), "
            f"teacher-forced through the serving engine, against {q['reference']}.",
            "",
            "| weights | KV cache | next-token agreement | KL (nats, mean) | perplexity | max \\|logit diff\\| |",
            "|---|---|---|---|---|---|",
        ]
        for r in q["results"]:
            w = "float32" if r["weights"] == "none" else r["weights"]
            lines.append(
                f"| {w} | {r['kv']} | {r['next_token_agreement']:.2%} | {r['kl_mean']:.4f} | "
                f"{r['perplexity']:.2f} | {r['max_abs_logit_diff']:.2f} |"
            )
        lines.append("")
    lines += ["Raw JSON of every script: `docs/benchmarks/` (`report.json` is the table above).", ""]
    path = out / "BENCHMARKS.md"
    path.write_text("\n".join(lines) + kept_sections(path.read_text() if path.exists() else ""))
    return path


KEPT = re.compile(r"<!-- (bench_vs_llama_server:[\w-]+) -->.*?<!-- /\1 -->", re.S)


def kept_sections(previous: str) -> str:
    """The sections other scripts keep in BENCHMARKS.md between their markers (``scripts/bench_vs_llama_server.py``:
    it runs for an hour and builds llama.cpp, so this report carries its latest result over instead of running it)."""
    blocks = [m.group(0) for m in KEPT.finditer(previous)]
    return "".join(f"\n{b}\n" for b in blocks)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="CI-sized workloads (minutes, noisy)")
    p.add_argument("--out", default="docs", help="where BENCHMARKS.md and benchmarks/ go")
    p.add_argument("--from", dest="from_dir", help="rebuild from this run folder instead of measuring")
    p.add_argument("--raw", default="out/report", help="run folder for the scripts' raw output")
    p.add_argument("--note", help="a paragraph to print under the title (e.g. where --from's files came from)")
    args = p.parse_args(argv)
    raw = (ROOT / (args.from_dir or args.raw)).resolve()
    if not args.from_dir:
        run_all(raw, args.quick)
    rows = collect(raw)
    if not rows:
        raise SystemExit(f"no benchmark output found in {raw}")
    cpus = recorded_cpus(raw)
    path = write(rows, raw, ROOT / args.out, args.quick, args.note, cpus)
    print(json.dumps({"report": str(path.relative_to(ROOT)), "cpu": cpus[0] if len(cpus) == 1 else cpus, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
