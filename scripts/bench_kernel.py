"""The Pallas kernels on this machine's accelerator: checked against their references on the device, then
timed against the device's limits. One JSON object on stdout (and in ``--out``).

    python scripts/bench_kernel.py [--quick] [--runs 30] [--out out/bench_kernel.json]   # on a GPU or TPU
    python scripts/bench_kernel.py --smoke                                              # anywhere: tiny, interpreted

The kernel is the platform's (what ``attention_backend=auto`` runs there): ``pallas_gpu``
(``pallas_kernels.ragged_paged_attention``, Triton) on a GPU, ``pallas_tpu``
(``...ragged_paged_attention.tpu``, Mosaic) on a TPU; the quantized matmul likewise
(``quant_matmul`` / ``quant_matmul.tpu.quant_matmul_tpu``).

1. Check. Mixed decode/prefill batches (paged, pages permuted, every slot no sequence owns NaN; built by
   the kernel tests' own ``make_batch``), float and 8-bit (int8, fp8) caches, sliding window and soft
   cap, run through the compiled kernel and the XLA path and compared elementwise with
   ``ragged_paged_attention_reference`` using the tests' per-dtype tolerance table; the quantized
   matmul (int8, int4) against ``quant_matmul_reference``. A kernel that fails to compile here is a
   failed case, recorded with its error, not skipped.
2. Decode: 128 sequences at 4,096 tokens of context, one query row each (Llama-3-8B heads: 32 q, 8 kv,
   head_dim 128, page 16), bfloat16 and int8 caches. Bytes = the KV actually read (sum over sequences
   of kv_len * kv_heads * head_dim * 2 (K and V) * bytes per element, plus the scales of an 8-bit
   cache) + q + out; achieved bandwidth = bytes / time, reported as a fraction of the device's HBM
   bandwidth. The XLA path is timed beside the bfloat16 kernel as its peer.
3. Prefill: 8 fresh prompts of 2,048 tokens (16,384 query rows). FLOPs = 4 * sum over rows of the keys
   the row sees (causal: row j of a prompt sees j + 1) * q_heads * head_dim (QK^T and PV, 2 FLOPs a
   multiply-add); achieved FLOP/s as a fraction of the device's dense bfloat16 peak.

Timing: ``jax.block_until_ready`` around each call, ``--runs`` calls after warm-up calls (the first
compiles), median and p90 reported. Peaks come from ``DEVICE_SPECS`` (vendor spec sheets); an unknown
device gets fractions of null, never a made-up peak. Nothing is timed on the host CPU: without an
accelerator this script refuses to time (exit 2), and ``--smoke`` runs every step on tiny shapes with
the kernels interpreted, only to show the script works, with every timing null.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------- device limits


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    name: str
    hbm_gbs: float  # memory bandwidth, GB/s (1e9 bytes)
    bf16_tflops: float  # dense bfloat16 matmul peak, TFLOP/s (no sparsity)


# Vendor spec sheets (NVIDIA H100/H200/A100 datasheets; Google Cloud TPU system architecture pages),
# not measurements. Keyed by a regular expression on jax's Device.device_kind, lower-cased; first match
# wins (an H100 PCIe, 2.0 TB/s and 756 TFLOP/s, is deliberately not matched by the SXM row).
DEVICE_SPECS: list[tuple[str, DeviceSpec]] = [
    (r"h200", DeviceSpec("NVIDIA H200", 4800, 989)),
    (r"h100(?!.*pcie)", DeviceSpec("NVIDIA H100 SXM", 3350, 989)),
    (r"a100.*80\s*gb", DeviceSpec("NVIDIA A100 80GB", 2000, 312)),
    (r"tpu v5 ?(lite|e)\b", DeviceSpec("TPU v5e", 819, 197)),
    (r"tpu v6 ?(lite|e)\b", DeviceSpec("TPU v6e", 1640, 918)),
    (r"tpu v5p?$", DeviceSpec("TPU v5p", 2760, 459)),
    (r"tpu v4", DeviceSpec("TPU v4", 1200, 275)),
]


def device_spec(device_kind: str) -> DeviceSpec | None:
    kind = device_kind.lower().strip()
    for pattern, spec in DEVICE_SPECS:
        if re.search(pattern, kind):
            return spec
    return None


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:400] if text else ''}"


# ---------------------------------------------------------------- the platform's kernels


def kernel_backend(platform: str) -> str:
    """What ``attention_backend=auto`` runs on ``platform`` (``pallas_gpu``, ``pallas_tpu``, ``xla``)."""
    from runtime.worker.attention import resolve_backend

    return resolve_backend("auto", platform)


def kernel_impls(platform: str, smoke: bool, gpu: Callable, tpu: Callable) -> dict[str, Callable]:
    """name -> kernel: on a device the platform's compiled one; ``smoke``: both interpreted (the TPU one
    through ``pltpu.InterpretParams``), whatever the platform."""
    if smoke:
        return {
            "pallas_gpu_interpret": functools.partial(gpu, interpret=True),
            "pallas_tpu_interpret": functools.partial(tpu, interpret=True),
        }
    backend = kernel_backend(platform)
    compiled = {"pallas_gpu": gpu, "pallas_tpu": tpu}
    if backend not in compiled:
        raise ValueError(f"no compiled kernel on platform {platform!r} (auto picks {backend!r})")
    return {backend: functools.partial(compiled[backend], interpret=False)}


def attention_impls(platform: str, smoke: bool) -> dict[str, Callable]:
    """name -> fn(q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs, **kw): the kernels of
    ``kernel_impls`` and the XLA path."""
    from pallas_kernels.ragged_paged_attention import (
        ragged_paged_attention,
        ragged_paged_attention_tpu,
        ragged_paged_attention_xla,
    )

    kernels = kernel_impls(platform, smoke, ragged_paged_attention, ragged_paged_attention_tpu)
    return {**kernels, "xla": ragged_paged_attention_xla}


def matmul_impls(platform: str, smoke: bool) -> dict[str, Callable]:
    from pallas_kernels.quant_matmul import quant_matmul, quant_matmul_tpu

    return kernel_impls(platform, smoke, quant_matmul, quant_matmul_tpu)


# ---------------------------------------------------------------- 1. check


# name, q_lens, kv_lens, (q heads, kv heads, head_dim, page_size), dtype, kv_dtype, sliding_window, soft_cap
_SMOKE_CASES = [("tiny mixed f32", [1, 3], [5, 12], (2, 1, 32, 16), "float32", None, None, None)]
_CASES = [
    # decodes at page edges, a prefill chunk on a long context, a whole short prompt, an empty row
    ("mixed f32", [1, 1, 1, 17, 1, 0, 5], [1, 16, 33, 17, 100, 0, 64], (8, 2, 64, 16), "float32", None, None, None),
    ("mixed bf16 window", [1, 9, 1, 1, 32], [70, 9, 16, 129, 96], (8, 2, 128, 16), "bfloat16", None, 48, None),
    ("decode bf16 softcap", [1] * 6, [1, 15, 16, 17, 200, 31], (4, 4, 64, 16), "bfloat16", None, None, 30.0),
    ("gemma-like bf16 d256", [1, 1, 40, 1], [600, 1, 40, 513], (4, 1, 256, 16), "bfloat16", None, 512, None),
    ("int8 KV bf16", [1, 1, 7, 1], [64, 300, 7, 33], (32, 8, 128, 16), "bfloat16", "int8", None, None),
    ("fp8 KV bf16", [1, 5, 1], [129, 5, 250], (9, 3, 64, 32), "bfloat16", "fp8", None, None),
]


def attention_cases(smoke: bool) -> list[tuple[str, dict, dict]]:
    """(name, make_batch kwargs, attention kwargs). Shapes satisfy the compiled kernels' tile rules
    (power-of-two head_dim >= 16, page sizes the tables know)."""
    import jax.numpy as jnp

    out = []
    for name, q_lens, kv_lens, (hq, hkv, d, page), dtype, kv_dtype, window, cap in _SMOKE_CASES if smoke else _CASES:
        shape = dict(q_lens=q_lens, kv_lens=kv_lens, num_q_heads=hq, num_kv_heads=hkv, head_dim=d, page_size=page)
        shape.update(dtype=jnp.dtype(dtype), **({"kv_dtype": kv_dtype} if kv_dtype else {}))
        extra = {k: v for k, v in (("sliding_window", window), ("soft_cap", cap)) if v is not None}
        out.append((name, shape, extra))
    return out


def _compare(got, expected, rtol: float, atol: float, record: dict) -> None:
    got, expected = np.asarray(got, np.float32), np.asarray(expected, np.float32)
    err = np.abs(got - expected)
    record["max_abs_err"] = float(np.nanmax(err)) if np.isfinite(err).any() else float("nan")
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def _run_case(record: dict, fn: Callable) -> dict:
    try:
        fn()
        record["passed"] = True
    except AssertionError as exc:
        record["passed"] = False
        record["error"] = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else "mismatch"
    except Exception as exc:  # noqa: BLE001 - a kernel that does not compile here fails the check, visibly
        record["passed"] = False
        record["error"] = _error(exc)
        log(traceback.format_exc(limit=4))
    log(
        f"  check {record['name']:<24} {record['impl']:<21} {'ok' if record['passed'] else 'FAILED: ' + record['error']}"
    )
    return record


def check_attention(platform: str, smoke: bool) -> dict:
    # The kernel tests' batch builder, runners and per-dtype tolerance table.
    from tests.support.attention_cases import TOLERANCES, make_batch, run_paged, run_reference

    impls = attention_impls(platform, smoke)
    cases = []
    for i, (name, shape, extra) in enumerate(attention_cases(smoke)):
        b = make_batch(np.random.default_rng(i), **shape)
        kw = dict(sm_scale=1.0 / math.sqrt(shape["head_dim"]), **extra)
        expected = np.asarray(run_reference(b, quantized="kq" in b, **kw))
        rtol, atol = TOLERANCES[expected.dtype]
        for impl, fn in impls.items():
            record = {
                "name": name,
                "impl": impl,
                "dtype": str(expected.dtype),
                "kv_dtype": shape.get("kv_dtype") or str(expected.dtype),
                "q_lens": shape["q_lens"],
                "kv_lens": shape["kv_lens"],
                "heads": [shape["num_q_heads"], shape["num_kv_heads"]],
                "head_dim": shape["head_dim"],
                "page_size": shape["page_size"],
                **extra,
                "rtol": rtol,
                "atol": atol,
            }
            cases.append(_run_case(record, lambda: _compare(run_paged(fn, b, **kw), expected, rtol, atol, record)))
    return {"passed": all(c["passed"] for c in cases), "cases": cases}


def check_quant_matmul(platform: str, smoke: bool) -> dict:
    import jax.numpy as jnp

    from pallas_kernels.quant_matmul import quant_matmul_reference
    from runtime.quant.weights import QuantizedMatrix
    from tests.runtime.quant.test_quant import TOLERANCES  # the quantized matmul tests' table

    shapes = (
        [(3, 256, 128, "int8", 0), (5, 256, 128, "int4", 64)]
        if smoke
        else [
            (1, 576, 1536, "int8", 0),
            (64, 4096, 1024, "int8", 0),
            (1, 576, 1536, "int4", 64),
            (64, 4096, 1024, "int4", 128),
        ]
    )
    impls = matmul_impls(platform, smoke)
    rng = np.random.default_rng(7)
    cases = []
    for m, k, n, mode, group in shapes:
        w = QuantizedMatrix.from_float(rng.standard_normal((n, k)).astype(np.float32) * 0.05, mode, group or 64)
        x = jnp.asarray(rng.standard_normal((m, k)), jnp.bfloat16)
        kw = dict(bits=w.bits, group=w.group, in_features=w.in_features)
        q, scale = jnp.asarray(w.q), jnp.asarray(w.scale)
        expected = np.asarray(quant_matmul_reference(x, q, scale, **kw))
        rtol, atol = TOLERANCES[expected.dtype]
        for impl, fn in impls.items():
            record = {
                "name": f"{mode} {m}x{k}x{n}" + (f" g{w.group}" if w.bits == 4 else ""),
                "impl": impl,
                "rtol": rtol,
                "atol": atol,
            }
            cases.append(_run_case(record, lambda: _compare(fn(x, q, scale, **kw), expected, rtol, atol, record)))
    return {"passed": all(c["passed"] for c in cases), "cases": cases}


# ---------------------------------------------------------------- 2, 3. timing


def time_calls(fn: Callable[[], Any], runs: int, warmup: int, smoke: bool) -> dict:
    """Median and p90 of ``runs`` calls after ``warmup`` calls, each ended by block_until_ready.
    ``smoke``: one call, to show it runs; no timing."""
    import jax

    if smoke:
        jax.block_until_ready(fn())
        return {"median_ms": None, "p90_ms": None, "runs": 0}
    for _ in range(warmup):
        jax.block_until_ready(fn())
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    times.sort()
    return {
        "median_ms": round(statistics.median(times) * 1e3, 4),
        "p90_ms": round(times[min(len(times) - 1, math.ceil(0.9 * len(times)) - 1)] * 1e3, 4),
        "min_ms": round(times[0] * 1e3, 4),
        "runs": runs,
    }


# The timed shapes' heads and pages: Llama 3 8B's on a device, tiny ones for --smoke.
HEADS = dict(num_q_heads=32, num_kv_heads=8, head_dim=128, page_size=16, dtype="bfloat16")
SMOKE_HEADS = dict(num_q_heads=2, num_kv_heads=1, head_dim=32, page_size=16, dtype="float32")


def decode_shape(smoke: bool, kv_dtype: str) -> dict:
    seqs, kv_len = (2, 20) if smoke else (128, 4096)
    return dict(seqs=seqs, kv_len=kv_len, q_len=1, **(SMOKE_HEADS if smoke else HEADS), kv_dtype=kv_dtype)


def prefill_shape(smoke: bool) -> dict:
    """Fresh prompts: every row's context is its own prompt."""
    seqs, length = (2, 8) if smoke else (8, 2048)
    return dict(seqs=seqs, kv_len=length, q_len=length, **(SMOKE_HEADS if smoke else HEADS), kv_dtype="float")


def build_inputs(s: dict, seed: int = 0) -> tuple[tuple, dict]:
    """Paged inputs made on the device (random values, pages permuted in the pool): (args, scales)."""
    import jax
    import jax.numpy as jnp

    dtype = jnp.dtype(s["dtype"])
    ps, n, kv_len = s["page_size"], s["seqs"], s["kv_len"]
    pages_per_seq = -(-kv_len // ps)
    n_pages = n * pages_per_seq + 1
    page_indices = np.random.default_rng(seed).permutation(n_pages)[: n * pages_per_seq].reshape(n, pages_per_seq)
    keys = jax.random.split(jax.random.key(seed), 5)
    shape = (n_pages, ps, s["num_kv_heads"], s["head_dim"])
    T = n * s["q_len"]
    q = jax.random.normal(keys[0], (T, s["num_q_heads"], s["head_dim"]), dtype)
    scales = {}
    if s["kv_dtype"] == "float":
        k, v = (jax.random.normal(kk, shape, dtype) for kk in keys[1:3])
    else:
        from runtime.quant.kv import QUANTIZED_KV_DTYPES, SCALE_DTYPE

        code = QUANTIZED_KV_DTYPES[s["kv_dtype"]]
        k, v = ((jax.random.normal(kk, shape, jnp.float32) * 20).astype(code) for kk in keys[1:3])
        scales = {
            name: jax.random.uniform(kk, shape[:3], SCALE_DTYPE, 0.01, 0.1)
            for name, kk in zip(("k_scales", "v_scales"), keys[3:5])
        }
    args = (
        q,
        k,
        v,
        jnp.full((n,), kv_len, jnp.int32),
        jnp.asarray(page_indices, jnp.int32),
        jnp.arange(n + 1, dtype=jnp.int32) * s["q_len"],
        jnp.asarray([n], jnp.int32),
    )
    return args, scales


def decode_bytes(s: dict) -> dict:
    """The least a decode step must move: the KV it attends over (K and V, scales of an 8-bit cache),
    q and out."""
    elem = 2 if s["dtype"] == "bfloat16" else 4
    kv_elem = elem if s["kv_dtype"] == "float" else 1
    tokens = s["seqs"] * s["kv_len"]
    kv = 2 * tokens * s["num_kv_heads"] * s["head_dim"] * kv_elem
    scales = 0 if s["kv_dtype"] == "float" else 2 * tokens * s["num_kv_heads"] * 2  # bfloat16 scales
    q = s["seqs"] * s["q_len"] * s["num_q_heads"] * s["head_dim"] * elem
    return {"kv_bytes": kv, "scale_bytes": scales, "q_bytes": q, "out_bytes": q, "bytes": kv + scales + 2 * q}


def prefill_flops(s: dict) -> int:
    """4 * sum over rows of visible keys * q_heads * head_dim, causal: row j of a fresh prompt sees j + 1."""
    per_seq = sum(s["kv_len"] - s["q_len"] + j + 1 for j in range(s["q_len"]))
    return 4 * s["seqs"] * per_seq * s["num_q_heads"] * s["head_dim"]


def _timed(record: dict, fn: Callable, s: dict, seed: int, runs: int, smoke: bool) -> float | None:
    """Times ``fn`` on ``build_inputs(s, seed)`` into ``record``, or records why it could not; the median ms."""
    try:
        args, scales = build_inputs(s, seed)
        kw = dict(sm_scale=1.0 / math.sqrt(s["head_dim"]), **scales)
        record.update(time_calls(lambda: fn(*args, **kw), runs, warmup=3, smoke=smoke))
    except Exception as exc:  # noqa: BLE001 - a kernel that fails here is reported, and the others still run
        record["error"] = _error(exc)
        log(traceback.format_exc(limit=4))
    return record.get("median_ms")


def _per_second(amount: float, ms: float | None, unit: float, digits: int) -> float | None:
    return round(amount / (ms / 1e3) / unit, digits) if ms else None


def _fraction(achieved: float | None, peak: float | None) -> float | None:
    return round(achieved / peak, 4) if achieved is not None and peak is not None else None


def _error_note(record: dict) -> str:
    return f"  ERROR {record['error']}" if "error" in record else ""


def time_decode(platform: str, smoke: bool, runs: int, spec: DeviceSpec | None) -> list[dict]:
    impls = attention_impls(platform, smoke)
    kernels = [name for name in impls if name != "xla"]
    # The kernels on both caches, and the XLA path beside the float one as its peer (smoke: the int8
    # cache through the XLA path only; the interpreter is slow and this only shows the plumbing).
    plan = [(kv, name) for kv in ("float", "int8") for name in kernels if not (smoke and kv == "int8")]
    plan += [("float", "xla")] + ([("int8", "xla")] if smoke else [])
    out = []
    for kv_dtype, impl in plan:
        s = decode_shape(smoke, kv_dtype)
        record = {"impl": impl, **s, **decode_bytes(s)}
        if s["kv_dtype"] == "float":
            record["kv_dtype"] = s["dtype"]
        ms = _timed(record, impls[impl], s, 0, runs, smoke)
        record["achieved_gbs"] = _per_second(record["bytes"], ms, 1e9, 2)
        record["hbm_fraction"] = _fraction(record["achieved_gbs"], spec and spec.hbm_gbs)
        log(
            f"  decode {impl:<21} {record['kv_dtype']:<9} {ms} ms  {record['achieved_gbs']} GB/s  "
            f"fraction {record['hbm_fraction']}" + _error_note(record)
        )
        out.append(record)
    return out


def time_prefill(platform: str, smoke: bool, runs: int, spec: DeviceSpec | None) -> list[dict]:
    impls = attention_impls(platform, smoke)
    out = []
    for impl in [name for name in impls if name != "xla"]:
        s = prefill_shape(smoke)
        record = {"impl": impl, **s, "kv_dtype": s["dtype"], "flops": prefill_flops(s)}
        ms = _timed(record, impls[impl], s, 1, runs, smoke)
        record["achieved_tflops"] = _per_second(record["flops"], ms, 1e12, 3)
        record["flops_fraction"] = _fraction(record["achieved_tflops"], spec and spec.bf16_tflops)
        log(
            f"  prefill {impl:<20} {ms} ms  {record['achieved_tflops']} TFLOP/s  fraction {record['flops_fraction']}"
            + _error_note(record)
        )
        out.append(record)
    return out


# ---------------------------------------------------------------- the whole kernel part


def environment() -> dict:
    import jax

    from runtime.platform import cpu_info

    device = jax.devices()[0]
    spec = device_spec(device.device_kind)
    return {
        "cpu": cpu_info(),  # the host's, beside the device
        "platform": jax.default_backend(),
        "device_kind": device.device_kind,
        "device_count": jax.device_count(),
        "jax_version": jax.__version__,
        "peak": None if spec is None else {**dataclasses.asdict(spec), "source": "vendor spec sheet"},
    }


def refuse_reason(platform: str, smoke: bool) -> str | None:
    if smoke or platform in ("gpu", "tpu"):
        return None
    return (
        f"no accelerator here (jax platform {platform!r}): nothing is timed on the host CPU. "
        f"--smoke runs every step on tiny shapes in interpret mode, with timings null"
    )


def run_kernels(*, smoke: bool, runs: int, deadline: float | None = None) -> dict:
    """Checks, then decode and prefill timings, on the current default device. ``deadline``
    (time.monotonic) skips the timings that would start after it."""
    env = environment()
    platform = env["platform"]
    spec = device_spec(env["device_kind"])
    report: dict[str, Any] = {"attention_backend": "interpret (smoke)" if smoke else kernel_backend(platform)}
    log(f"bench_kernel: {platform} ({env['device_kind']}), jax {env['jax_version']}{', smoke' if smoke else ''}")
    log("checking the attention kernel against the reference ...")
    t = time.perf_counter()
    report["attention_check"] = check_attention(platform, smoke)
    log("checking the quantized matmul against the reference ...")
    report["quant_matmul_check"] = check_quant_matmul(platform, smoke)
    report["check_seconds"] = round(time.perf_counter() - t, 1)
    for name, step in (("decode", time_decode), ("prefill", time_prefill)):
        if deadline is not None and time.monotonic() > deadline:
            report[name] = {"skipped": "time budget spent"}
            continue
        log(f"timing {name} ({'one untimed call' if smoke else f'{runs} runs'}) ...")
        report[name] = step(platform, smoke, runs, spec)
    report["passed"] = report["attention_check"]["passed"] and report["quant_matmul_check"]["passed"]
    return {**env, **report}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="tiny shapes, kernels interpreted, no timing (any machine)")
    p.add_argument("--quick", action="store_true", help="fewer timed runs")
    p.add_argument("--runs", type=int, default=None, help="timed runs after warm-up (default 30, --quick 10)")
    p.add_argument("--out", default="out/bench_kernel.json")
    args = p.parse_args(argv)

    import jax

    reason = refuse_reason(jax.default_backend(), args.smoke)
    if reason:
        log(f"bench_kernel: {reason}")
        return 2
    report = run_kernels(smoke=args.smoke, runs=args.runs or (10 if args.quick else 30))
    report["mode"] = "smoke" if args.smoke else ("quick" if args.quick else "full")
    text = json.dumps(report, indent=2)
    print(text, flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
