"""Ragged paged attention on this machine's device: correctness against the reference, then achieved
memory bandwidth as a fraction of the device's peak. One JSON object on stdout (and in ``--out``).

1. Check. Mixed decode/prefill batches (paged, pages permuted, every slot no sequence owns NaN, built
   by the kernel tests' own ``make_batch``) are run through each implementation and compared
   elementwise with ``ragged_paged_attention_reference`` using the tests' per-dtype tolerance table
   (tests/test_ragged_paged_attention.py):
     GPU/TPU  the compiled Pallas kernel (interpret=False) and the XLA path, on every case;
     CPU      the XLA path (the CPU engine's backend) on every case;
     all      the Pallas kernel in interpret mode on one tiny case (the interpreter is slow).
   The kernel is written against Pallas' Triton lowering (``plgpu.load/store``); where it does not
   lower (a TPU), the compile error is recorded in the JSON as a failed case, not skipped.
2. Timing. A decode-heavy step (many decode rows at long contexts plus a few prefill chunks) through
   the backend the engine picks here (``auto``: compiled Pallas on an accelerator, XLA on CPU) and,
   on an accelerator, the XLA path as its peer: median of N runs after warm-up, each ended by
   ``block_until_ready``. Bytes moved = every sequence's K and V once (the least any implementation
   must read) + q + out; achieved bandwidth = bytes / median time, reported as a fraction of the
   device's peak: a table of published peaks for known GPUs and TPUs, otherwise (CPU, unknown
   device) a peak measured here with a large jnp copy/sum probe. The JSON says which.

    python scripts/bench_kernel.py [--quick] [--runs 20] [--out out/bench_kernel.json]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

# Published HBM bandwidth, GB/s, keyed by a pattern on jax's device_kind (lowercased). First match wins.
PEAK_BANDWIDTH_GBS: list[tuple[str, float, str]] = [
    (r"h200", 4800, "NVIDIA H200"),
    (r"h100(?!.*pcie)", 3350, "NVIDIA H100 SXM"),
    (r"a100.*80\s*gb", 2000, "NVIDIA A100 80GB"),
    (r"\bl4\b", 300, "NVIDIA L4"),
    (r"tpu v4", 1200, "TPU v4"),
    (r"tpu v5 ?(lite|e)", 820, "TPU v5e"),
    (r"tpu v5p?$", 2760, "TPU v5p"),
    (r"tpu v6 ?(lite|e)", 1640, "TPU v6e"),
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def table_peak(device_kind: str) -> tuple[float, str] | None:
    kind = device_kind.lower().strip()
    for pattern, gbs, name in PEAK_BANDWIDTH_GBS:
        if re.search(pattern, kind):
            return gbs, name
    return None


def measure_peak_bandwidth(quick: bool) -> dict:
    """Best of a jnp copy (x + 1 into a donated buffer: reads and writes N floats) and a sum (reads
    N), on a buffer much larger than any CPU cache, on the default device. Best of many runs: the
    probe estimates what the memory can do, and other work on the machine only slows it down.
    Without donation the copy would time the allocation of its output (page faults), not the memory."""
    import jax
    import jax.numpy as jnp

    n = (32 if quick else 128) * 2**20  # float32 elements: 128 MB / 512 MB
    copy, total = jax.jit(lambda a: a + 1.0, donate_argnums=0), jax.jit(jnp.sum)
    x = copy(jnp.ones((n,), jnp.float32)).block_until_ready()
    reps = 20 if quick else 40
    best_copy = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        x = copy(x).block_until_ready()
        best_copy = min(best_copy, time.perf_counter() - t)
    total(x).block_until_ready()
    best_sum = min(_timed(lambda: total(x).block_until_ready()) for _ in range(reps))
    probe = {"copy": 2 * 4 * n / best_copy / 1e9, "sum": 4 * n / best_sum / 1e9}
    return {"bandwidth_gbs": round(max(probe.values()), 2), "source": "measured: jnp copy/sum probe (best of runs)",
            "probe_gbs": {k: round(v, 2) for k, v in probe.items()}, "probe_bytes": 4 * n}


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# ---------------------------------------------------------------- check

def check_cases(platform: str):
    """(name, impls, batch kwargs, attention kwargs). Shapes satisfy the compiled kernel's tile rules
    (power-of-two head_dim >= 16, pages_per_block * page_size a power of two >= 16)."""
    import jax.numpy as jnp

    compiled = ["pallas", "xla"] if platform != "cpu" else ["xla"]
    return [
        # decodes at page edges, a prefill chunk on a long context, a whole short prompt, an empty row
        ("mixed f32", compiled,
         dict(q_lens=[1, 1, 1, 17, 1, 0, 5], kv_lens=[1, 16, 33, 17, 100, 0, 64], num_q_heads=8, num_kv_heads=2,
              head_dim=64, page_size=16, dtype=jnp.float32), {}),
        ("mixed bf16 window", compiled,
         dict(q_lens=[1, 9, 1, 1, 32], kv_lens=[70, 9, 16, 129, 96], num_q_heads=8, num_kv_heads=2, head_dim=128,
              page_size=16, dtype=jnp.bfloat16), dict(sliding_window=48)),
        ("decode bf16 softcap", compiled,
         dict(q_lens=[1] * 6, kv_lens=[1, 15, 16, 17, 200, 31], num_q_heads=4, num_kv_heads=4, head_dim=64,
              page_size=16, dtype=jnp.bfloat16), dict(soft_cap=30.0)),
        ("tiny f32 (interpret)", ["pallas_interpret"],
         dict(q_lens=[1, 3, 1], kv_lens=[5, 9, 12], num_q_heads=4, num_kv_heads=2, head_dim=16, page_size=4,
              dtype=jnp.float32), {}),
    ]


def run_check(platform: str) -> dict:
    from pallas_kernels.ragged_paged_attention import (
        ragged_paged_attention,
        ragged_paged_attention_reference,
        ragged_paged_attention_xla,
    )
    from test_ragged_paged_attention import TOLERANCES, make_batch  # the tests' table and batch builder

    impls = {
        "pallas": lambda b, **kw: ragged_paged_attention(*_paged(b), interpret=False, **kw),
        "pallas_interpret": lambda b, **kw: ragged_paged_attention(*_paged(b), interpret=True, **kw),
        "xla": lambda b, **kw: ragged_paged_attention_xla(*_paged(b), **kw),
    }
    cases = []
    for i, (name, names, shape, extra) in enumerate(check_cases(platform)):
        b = make_batch(np.random.default_rng(i), **shape)
        kw = dict(sm_scale=1.0 / math.sqrt(shape["head_dim"]), **extra)
        expected = np.asarray(ragged_paged_attention_reference(b["q"], b["k"], b["v"], b["kv_lens"], b["cu_q_lens"],
                                                               b["num_seqs"], **kw))
        rtol, atol = TOLERANCES[expected.dtype]
        for impl in names:
            record = {"name": name, "impl": impl, "dtype": str(expected.dtype), "q_lens": shape["q_lens"],
                      "kv_lens": shape["kv_lens"], "heads": [shape["num_q_heads"], shape["num_kv_heads"]],
                      "head_dim": shape["head_dim"], "page_size": shape["page_size"],
                      **{k: v for k, v in extra.items()}, "rtol": rtol, "atol": atol}
            try:
                got = np.asarray(impls[impl](b, **kw))
                err = np.abs(got.astype(np.float32) - expected.astype(np.float32))
                record["max_abs_err"] = float(np.nanmax(err)) if np.isfinite(err).any() else float("nan")
                np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32), rtol=rtol, atol=atol)
                record["passed"] = True
            except AssertionError as exc:
                record["passed"] = False
                record["error"] = str(exc).strip().splitlines()[0][:300]
            except Exception as exc:  # a kernel that does not compile here fails the check, visibly
                record["passed"] = False
                record["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
                log(traceback.format_exc(limit=3))
            log(f"  check {name:<22} {impl:<17} {'ok' if record['passed'] else 'FAILED: ' + record['error']}")
            cases.append(record)
    return {"passed": all(c["passed"] for c in cases), "cases": cases}


def _paged(b):
    return b["q"], b["k_pages"], b["v_pages"], b["kv_lens"], b["page_indices"], b["cu_q_lens"], b["num_seqs"]


# ---------------------------------------------------------------- timing

def timing_shape(platform: str, quick: bool) -> dict:
    """A decode-heavy step: ``decodes`` rows at ``decode_ctx`` plus ``prefills`` chunks of
    ``chunk`` tokens ending at ``prefill_ctx``. Accelerators get a Llama-like head layout in bf16."""
    if platform == "cpu":
        # quick: ~34 MB of KV, past this machine's last-level cache, so DRAM is what is measured
        return dict(decodes=32 if quick else 64, decode_ctx=1024 if quick else 2048, prefills=1 if quick else 2,
                    chunk=32 if quick else 64, prefill_ctx=512 if quick else 1024, num_q_heads=8, num_kv_heads=2,
                    head_dim=64, page_size=16, dtype="float32")
    return dict(decodes=64 if quick else 128, decode_ctx=2048 if quick else 4096, prefills=2 if quick else 4,
                chunk=128 if quick else 256, prefill_ctx=1024 if quick else 2048, num_q_heads=32, num_kv_heads=8,
                head_dim=128, page_size=16, dtype="bfloat16")


def build_timing_inputs(s: dict, seed: int = 0):
    """Paged inputs made on the device (random pages in a permuted pool), and the bytes to move."""
    import jax
    import jax.numpy as jnp

    dtype = jnp.dtype(s["dtype"])
    q_lens = [1] * s["decodes"] + [s["chunk"]] * s["prefills"]
    kv_lens = [s["decode_ctx"]] * s["decodes"] + [s["prefill_ctx"]] * s["prefills"]
    ps = s["page_size"]
    pages_per_seq = -(-max(kv_lens) // ps)
    n_pages = sum(-(-n // ps) for n in kv_lens) + 1
    rng = np.random.default_rng(seed)
    pool = iter(rng.permutation(n_pages))
    page_indices = np.zeros((len(kv_lens), pages_per_seq), np.int32)
    for i, n in enumerate(kv_lens):
        for j in range(-(-n // ps)):
            page_indices[i, j] = next(pool)
    k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
    shape = (n_pages, ps, s["num_kv_heads"], s["head_dim"])
    T = sum(q_lens)
    args = (jax.random.normal(k1, (T, s["num_q_heads"], s["head_dim"]), dtype),
            jax.random.normal(k2, shape, dtype), jax.random.normal(k3, shape, dtype),
            jnp.asarray(kv_lens, jnp.int32), jnp.asarray(page_indices),
            jnp.asarray(np.concatenate([[0], np.cumsum(q_lens)]), jnp.int32), jnp.asarray([len(q_lens)], jnp.int32))
    kv_bytes = 2 * sum(kv_lens) * s["num_kv_heads"] * s["head_dim"] * dtype.itemsize
    q_bytes = T * s["num_q_heads"] * s["head_dim"] * dtype.itemsize
    return args, {"tokens": T, "sequences": len(q_lens), "kv_bytes": kv_bytes, "q_bytes": q_bytes,
                  "out_bytes": q_bytes, "bytes": kv_bytes + 2 * q_bytes}


def time_impl(impl: str, args, head_dim: int, runs: int, warmup: int = 3) -> float:
    from pallas_kernels.ragged_paged_attention import ragged_paged_attention, ragged_paged_attention_xla

    kw = dict(sm_scale=1.0 / math.sqrt(head_dim))
    if impl == "pallas":
        fn = lambda: ragged_paged_attention(*args, interpret=False, **kw)  # noqa: E731
    else:
        fn = lambda: ragged_paged_attention_xla(*args, **kw)  # noqa: E731
    for _ in range(warmup):  # the first call compiles
        fn().block_until_ready()
    return statistics.median(_timed(lambda: fn().block_until_ready()) for _ in range(runs))


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller shapes and fewer runs")
    p.add_argument("--runs", type=int, default=None, help="timed runs after warm-up (default 10 quick, 50 full)")
    p.add_argument("--out", default="out/bench_kernel.json")
    args = p.parse_args(argv)

    from runtime.platform import configure_xla

    configure_xla()
    import jax

    from runtime.attention import resolve_backend

    platform = jax.default_backend()
    device = jax.devices()[0]
    report = {"platform": platform, "device": device.device_kind, "device_count": jax.device_count(),
              "jax_version": jax.__version__, "mode": "quick" if args.quick else "full"}
    log(f"bench_kernel: {platform} ({device.device_kind}), jax {jax.__version__}")

    log("checking against the reference ...")
    t = time.perf_counter()
    report["check"] = run_check(platform)
    report["check"]["seconds"] = round(time.perf_counter() - t, 1)

    engine_backend = resolve_backend("auto", platform)  # what the engine would run here
    primary = "pallas" if engine_backend.startswith("pallas") else "xla"
    if primary == "pallas" and not all(c["passed"] for c in report["check"]["cases"] if c["impl"] == "pallas"):
        log("the compiled kernel failed its check here: timing the XLA path instead")
        primary = "xla"
    impls = [primary] + (["xla"] if primary != "xla" else [])

    peak = table_peak(device.device_kind)
    if peak is not None:
        report["peak"] = {"bandwidth_gbs": peak[0], "source": f"table: {peak[1]}"}
    else:
        log("measuring peak bandwidth (jnp copy/sum probe) ...")
        report["peak"] = measure_peak_bandwidth(args.quick)

    shape = timing_shape(platform, args.quick)
    inputs, sizes = build_timing_inputs(shape)
    runs = args.runs or (10 if args.quick else 50)
    report["timing"] = []
    for impl in impls:
        log(f"timing {impl} ({runs} runs) ...")
        try:
            sec = time_impl(impl, inputs, shape["head_dim"], runs)
        except Exception as exc:
            report["timing"].append({"impl": impl, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            continue
        gbs = sizes["bytes"] / sec / 1e9
        report["timing"].append({"impl": impl, "median_ms": round(sec * 1000, 4), "runs": runs,
                                 "achieved_gbs": round(gbs, 2),
                                 "fraction_of_peak": round(gbs / report["peak"]["bandwidth_gbs"], 4)})
    report["timing_shape"] = {**shape, **sizes,
                              "bytes_counted": "K and V of every sequence once + q + out"}
    report["engine_backend"] = engine_backend
    report["timed_backend"] = primary
    first = report["timing"][0]
    report["bandwidth_fraction"] = first.get("fraction_of_peak")
    report["passed"] = report["check"]["passed"]

    text = json.dumps(report, indent=2)
    print(text, flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return 0 if report["passed"] and report["bandwidth_fraction"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
