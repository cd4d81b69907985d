"""The accelerator run: kernels checked and timed on the device, then engine throughput, into one JSON.

    python scripts/bench_accelerator.py [--quick] [--out out/accelerator.json] [--budget-s 540]
    python scripts/bench_accelerator.py --smoke [--engine-gguf tiny.gguf]   # any machine: tiny, untimed

Run by ``scripts/bench_accelerator.sh`` (which detects the platform and installs the JAX extra first).

1. Kernels (``scripts/bench_kernel.py``): the platform's attention kernel (``pallas_gpu`` or
   ``pallas_tpu``) and quantized matmul checked against their references on the device; decode's
   achieved HBM bandwidth and prefill's achieved FLOP/s as fractions of the device's spec-sheet peaks.
2. Engine: SmolLM2-135M in bfloat16 through ``LLMEngine`` (scheduler, model runner, the platform's
   kernel, on-device sampling) at 1, 32 and 256 concurrent requests of a 64-token prompt and 128
   generated tokens (``ignore_eos``). Each batch size runs once untimed with a few output tokens (it
   compiles every step program the timed run meets), then timed: output tokens/s over the whole run,
   decode tokens/s once every request has its first token, and the model-bandwidth utilization of a
   decode step (weights + the KV read, over the step time, as a fraction of HBM bandwidth).

Nothing is timed on the host CPU: on a CPU-only machine (or where JAX did not find the accelerator) the
script refuses (exit 2) unless ``--smoke``, which runs every step on tiny shapes (the kernels
interpreted, the engine on ``--engine-gguf`` or SmolLM2, two tiny batches) to show that the script
works, and reports every timing as null. A wall-clock budget (``--budget-s``) skips the parts that
would start after it, each recorded as skipped; the whole run is sized to finish well inside 10 minutes
on an H100/H200-class GPU or a v5e/v6e TPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PINNED_JAX = "0.10.2"  # pyproject.toml's pin: the version every result in this repo was tested with


def _load_bench_kernel():
    spec = importlib.util.spec_from_file_location("bench_kernel", ROOT / "scripts" / "bench_kernel.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_kernel"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


bench_kernel = _load_bench_kernel()
log = bench_kernel.log


# ---------------------------------------------------------------- engine throughput


def engine_throughput(
    *,
    batches: list[int],
    prompt_len: int,
    output_len: int,
    model: str,
    gguf: str | None,
    smoke: bool,
    spec,
    deadline: float,
    on_batch=None,
) -> dict:
    """Throughput of the serving engine at each batch size (see the module docstring). ``on_batch``
    is called with the report so far after each batch size."""
    import jax
    import numpy as np

    from runtime.api import EngineConfig, SamplingParams
    from runtime.engine.llm_engine import LLMEngine

    dtype = "bfloat16"
    max_len = prompt_len + output_len
    config = EngineConfig(
        model=model,
        gguf_path=gguf,
        dtype=dtype,
        attention_backend="auto",
        max_num_seqs=max(batches),
        max_num_batched_tokens=min(2048, max(batches) * prompt_len),
        max_model_len=max(max_len, 64),
        kv_cache_bytes=2 * 2**30 if not smoke else 64 * 2**20,
        enable_prefix_caching=False,
        compilation_cache=False,
    )
    t = time.perf_counter()
    engine = LLMEngine(config)
    load_s = time.perf_counter() - t
    mc = engine.model_config
    weight_bytes = sum(int(x.nbytes) for x in jax.tree_util.tree_leaves(engine.runner.params))
    kv_bytes_per_token = 2 * mc.num_layers * mc.num_kv_heads * mc.head_dim * 2  # bfloat16 K and V, all layers
    report: dict[str, Any] = {
        "model": model if gguf is None else Path(gguf).name,
        "dtype": dtype,
        "attention_backend": engine.attention_backend,
        "prompt_tokens": prompt_len,
        "output_tokens": output_len,
        "weight_bytes": weight_bytes,
        "kv_bytes_per_token": kv_bytes_per_token,
        "load_seconds": round(load_s, 1),
        "batches": [],
    }
    rng = np.random.default_rng(0)

    def run(batch: int, new_tokens: int) -> dict:
        params = SamplingParams(max_tokens=new_tokens, ignore_eos=True)
        prompts = [rng.integers(10, mc.vocab_size - 10, prompt_len).tolist() for _ in range(batch)]
        start = time.perf_counter()
        ids = [engine.add_request(p, params) for p in prompts]
        first: dict[str, float] = {}
        tokens = {i: 0 for i in ids}
        tpots, steps = [], 0
        while engine.has_unfinished_requests():
            outs = engine.step()
            steps += 1
            now = time.perf_counter()
            for o in outs:
                tokens[o.request_id] += len(o.token_ids)
                if o.token_ids and o.request_id not in first:
                    first[o.request_id] = now
                if o.finished and o.metrics.tpot_s is not None:
                    tpots.append(o.metrics.tpot_s)
        end = time.perf_counter()
        all_first = max(first.values())
        return {
            "wall_s": end - start,
            "decode_s": end - all_first,
            "steps": steps,
            "tokens": sum(tokens.values()),
            "tpots": tpots,
        }

    for batch in batches:
        if time.monotonic() > deadline:
            report["batches"].append({"batch": batch, "skipped": "time budget spent"})
            continue
        record: dict[str, Any] = {"batch": batch}
        try:
            if not smoke:  # compiles every step program the timed run meets (its prefill takes <= 8 steps)
                t = time.perf_counter()
                run(batch, min(16, output_len))
                record["warmup_seconds"] = round(time.perf_counter() - t, 1)
            r = run(batch, output_len)
            assert r["tokens"] == batch * output_len, r  # ignore_eos: every request runs to max_tokens
            decode_steps = output_len - 1
            record.update(steps=r["steps"], output_tokens=r["tokens"])
            if smoke:
                record.update(
                    output_tokens_per_s=None,
                    decode_tokens_per_s=None,
                    tpot_ms_median=None,
                    decode_step_ms=None,
                    mbu=None,
                )
            else:
                step_s = r["decode_s"] / decode_steps
                # A decode step reads every weight once and the KV of every sequence (its mean length here).
                step_bytes = weight_bytes + batch * (prompt_len + output_len / 2) * kv_bytes_per_token
                record.update(
                    wall_seconds=round(r["wall_s"], 3),
                    output_tokens_per_s=round(r["tokens"] / r["wall_s"], 1),
                    decode_tokens_per_s=round(batch * decode_steps / r["decode_s"], 1),
                    tpot_ms_median=round(statistics.median(r["tpots"]) * 1e3, 3) if r["tpots"] else None,
                    decode_step_ms=round(step_s * 1e3, 3),
                    decode_step_bytes=int(step_bytes),
                    mbu=round(step_bytes / step_s / 1e9 / spec.hbm_gbs, 4) if spec else None,
                )
        except Exception as exc:  # noqa: BLE001 - one batch size failing leaves the others' numbers
            record["error"] = bench_kernel._error(exc)
            log(traceback.format_exc(limit=4))
        log(f"  engine batch {batch:>3}: {record}")
        report["batches"].append(record)
        if on_batch is not None:
            on_batch(report)
    return report


# ---------------------------------------------------------------- main


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="tiny shapes, kernels interpreted, timings null (any machine)")
    p.add_argument("--quick", action="store_true", help="fewer timed kernel runs, 64 generated tokens")
    p.add_argument("--out", default="out/accelerator.json")
    p.add_argument("--budget-s", type=float, default=540.0, help="seconds from start; later parts are skipped")
    p.add_argument("--engine-model", default="smollm2-135m", help="model preset for the engine part")
    p.add_argument("--engine-gguf", default=None, help="a GGUF file for the engine part instead of the preset")
    p.add_argument("--no-engine", action="store_true", help="kernels only")
    p.add_argument("--platform-detected", help="what bench_accelerator.sh detected (gpu, tpu, cpu), for the record")
    args = p.parse_args(argv)
    start, deadline = time.perf_counter(), time.monotonic() + args.budget_s

    from runtime.platform import configure_xla

    configure_xla()
    import jax

    platform = jax.default_backend()
    if args.platform_detected and args.platform_detected != "cpu" and platform == "cpu":
        log(
            f"bench_accelerator: a {args.platform_detected} was detected but JAX runs on the CPU "
            f"(is the JAX {args.platform_detected} plugin installed?): refusing to time the host CPU"
        )
        return 2
    reason = bench_kernel.refuse_reason(platform, args.smoke)
    if reason:
        log(f"bench_accelerator: {reason}")
        return 2

    report: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "mode": "smoke" if args.smoke else ("quick" if args.quick else "full"),
        "platform_detected": args.platform_detected,
        "python": sys.version.split()[0],
        "jax_pinned": PINNED_JAX,
        "jax_matches_pin": jax.__version__ == PINNED_JAX,
    }

    def save(final: bool) -> None:
        """Written after each part too, so a run killed at its hard time limit still leaves its results."""
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps({**report, "complete": final}, indent=2) + "\n")

    kernels = bench_kernel.run_kernels(smoke=args.smoke, runs=10 if args.quick else 30, deadline=deadline)
    report.update(kernels)
    report["engine"] = {"skipped": "not reached"}
    report["summary"] = {"device": report["device_kind"], "checks_passed": report["passed"]}
    save(final=False)
    spec = bench_kernel.device_spec(report["device_kind"])

    if args.no_engine:
        report["engine"] = {"skipped": "--no-engine"}
    elif time.monotonic() > deadline:
        report["engine"] = {"skipped": "time budget spent"}
    else:
        log("engine throughput ...")
        try:
            report["engine"] = engine_throughput(
                batches=[1, 2] if args.smoke else [1, 32, 256],
                prompt_len=16 if args.smoke else 64,
                output_len=4 if args.smoke else (64 if args.quick else 128),
                model=args.engine_model,
                gguf=args.engine_gguf,
                smoke=args.smoke,
                spec=spec,
                deadline=deadline,
                on_batch=lambda partial: (report.__setitem__("engine", partial), save(final=False)),
            )
        except Exception as exc:  # noqa: BLE001 - e.g. the model package is not installed on this machine
            report["engine"] = {"error": bench_kernel._error(exc)}
            log(traceback.format_exc(limit=4))

    decode = report.get("decode")
    kernel_decode = (
        next((d for d in decode if d["impl"] != "xla" and d["kv_dtype"] == d["dtype"]), None)
        if isinstance(decode, list)
        else None
    )
    prefill = report.get("prefill")
    engine_ok = "error" not in report["engine"] and all("error" not in b for b in report["engine"].get("batches", []))
    report["summary"] = {
        "device": report["device_kind"],
        "attention_backend": report["attention_backend"],
        "checks_passed": report["passed"],
        "decode_hbm_fraction": kernel_decode and kernel_decode.get("hbm_fraction"),
        "prefill_flops_fraction": prefill[0].get("flops_fraction") if isinstance(prefill, list) and prefill else None,
        "engine_decode_tokens_per_s": {
            str(b["batch"]): b.get("decode_tokens_per_s") for b in report["engine"].get("batches", [])
        },
    }
    report["passed"] = bool(report["passed"] and engine_ok)
    report["seconds"] = round(time.perf_counter() - start, 1)

    report["complete"] = True
    save(final=True)
    print(json.dumps(report, indent=2), flush=True)
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
