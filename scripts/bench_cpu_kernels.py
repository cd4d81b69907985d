"""The CPU matmul kernels (``runtime/quant/quant_matmul.cc``) alone, on one decode step's matrices.

For each weight format (float32 rows, int8, int4, the GGUF file's Q8_0 / Q4_1 blocks) and row count M,
the time of one step's matmuls of a model shape (SmolLM2-135M by default: per layer q, k, v, o,
gate, up, down, plus the LM head), summed, as a median of ``--runs``; the bytes of weights it reads
and the rate (GB/s, and the fraction of the streaming-read bandwidth measured in the same run), and
XLA's own float32 dot on the same shapes as the peer; and the cost of one kernel call itself
(``call_overhead_us``: 211 chained calls on a 64 x 64 int8 matrix, per call, less one such call alone,
beside XLA's own dot in the same chain). One JSON object on stdout, with the CPU
(``cpu``) and the kernel's ISA path (``kernel_isa``); ``JAXSERVE_KERNEL_ISA=avx2|portable`` times
another path on the same machine.

    python scripts/bench_cpu_kernels.py [--rows 1,2,4,8,16] [--runs 20] [--layers 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

# (in_features, out_features) of one SmolLM2-135M layer's matrices, and its LM head.
LAYER = [(576, 576), (576, 192), (576, 192), (576, 576), (576, 1536), (576, 1536), (1536, 576)]
HEAD = (576, 49152)


def _time(f, *args, runs: int) -> float:
    f(*args).block_until_ready()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f(*args).block_until_ready()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def call_overhead_us(jax, jnp, quant_cpu, QuantizedMatrix, rng, *, runs: int, calls: int = 211) -> dict:
    """us per call of ``calls`` chained kernel calls on a tiny int8 matrix (64 x 64: ~1 us of arithmetic), the
    time of one such call subtracted, and the same for XLA's float32 dot: what a step pays per call on top of
    the matrix's own work (dispatch, argument checks, the thread pool)."""
    w = QuantizedMatrix.from_float(rng.standard_normal((64, 64)).astype(np.float32), "int8")
    q, s = jnp.asarray(w.q), jnp.asarray(w.scale)
    wf = jnp.asarray(np.asarray(w.dequantize()).T)
    x = jnp.asarray(rng.standard_normal((1, 64)), jnp.float32)
    out = {}
    for name, one in (
        ("kernel", lambda x: quant_cpu.matmul(x, q, s, bits=8, group=0, in_features=64)),
        ("xla_dot", lambda x: x @ wf),
    ):
        times = {}
        for n in (1, calls):

            def chain(x, n=n, one=one):
                for _ in range(n):
                    x = one(x) * 0.01  # the next call waits for this one
                return x

            times[n] = _time(jax.jit(chain), x, runs=runs)
        out[name] = round((times[calls] - times[1]) / (calls - 1) * 1e6, 3)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="1,2,4,8,16")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--layers", type=int, default=30)
    p.add_argument("--formats", default="xla_f32,f32,int8,int4,gguf")
    args = p.parse_args(argv)
    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    import jax
    import jax.numpy as jnp
    from bench_generate import measure_read_bandwidth_gbs

    from pallas_kernels.quant_matmul.gguf_blocks import BLOCK_BYTES
    from runtime.quant import cpu as quant_cpu
    from runtime.quant.weights import QuantizedMatrix

    rng = np.random.default_rng(0)
    shapes = LAYER * args.layers + [HEAD]
    weights = [(rng.standard_normal((n, k)) * 0.05).astype(np.float32) for k, n in shapes]

    def gguf_blocks(w, block_type):  # random codes in the file's layout (the values do not change the time)
        n, k = w.shape
        b = rng.integers(0, 256, (n, k // 32, BLOCK_BYTES[block_type]), dtype=np.uint8)
        b[:, :, 1] = 0x2C  # f16 d ~ 0.06 (high byte of the half), finite
        if block_type == "q4_1":
            b[:, :, 3] = 0xAC  # f16 m ~ -0.06
        return jnp.asarray(b.reshape(n, -1))

    formats = [f.strip() for f in args.formats.split(",")]
    mats, fns = {}, {}
    if "xla_f32" in formats:
        mats["xla_f32"] = [jnp.asarray(w.T) for w in weights]  # [K, N], as the float model's kernels
        fns["xla_f32"] = lambda x, m: x @ m
    if "f32" in formats:
        mats["f32"] = [jnp.asarray(w) for w in weights]
        fns["f32"] = quant_cpu.dense_matmul
    for mode, bits in (("int8", 8), ("int4", 4)):
        if mode in formats:
            qms = [QuantizedMatrix.from_float(w, mode, 64) for w in weights]
            mats[mode] = [(jnp.asarray(q.q), jnp.asarray(q.scale), q.in_features) for q in qms]
            fns[mode] = lambda x, m, bits=bits: quant_cpu.matmul(x, m[0], m[1], bits=bits, group=64, in_features=m[2])
    if "gguf" in formats:  # SmolLM2's file: Q8_0 for the LM head and some layers, Q4_1 for most: both timed
        for bt in ("q8_0", "q4_1"):
            mats[f"gguf_{bt}"] = [(gguf_blocks(w, bt), w.shape[1]) for w in weights]
            fns[f"gguf_{bt}"] = lambda x, m, bt=bt: quant_cpu.gguf_matmul(x, m[0], block_type=bt, in_features=m[1])

    def nbytes(m):
        return sum(int(a.nbytes) for a in jax.tree_util.tree_leaves(m) if hasattr(a, "nbytes"))

    overhead = call_overhead_us(jax, jnp, quant_cpu, QuantizedMatrix, rng, runs=args.runs * 10)
    print(f"call overhead: {overhead}", file=sys.stderr)
    bandwidth = measure_read_bandwidth_gbs()
    rows = [int(r) for r in args.rows.split(",")]
    out = {}
    for name, ms in mats.items():
        per = {}
        for M in rows:
            xs = jnp.asarray(rng.standard_normal((M, 576)), jnp.float32)

            def step(x, ms=ms, fn=fns[name]):
                # one decode step's chain: every matrix takes a row block of its own width
                return [fn(x[:, :1].repeat(m_in, 1), m) for m, m_in in zip(ms, [k for k, _ in shapes])]

            f = jax.jit(step)
            t = _time(lambda x, f=f: f(x)[-1], xs, runs=args.runs)
            b = nbytes(ms)
            per[M] = {
                "ms": round(t * 1e3, 3),
                "gb_s": round(b / t / 1e9, 2),
                "fraction_of_bandwidth": round(b / t / 1e9 / bandwidth, 3),
            }
            print(f"{name} M={M}: {t * 1e3:.2f} ms ({b / t / 1e9:.1f} GB/s)", file=sys.stderr)
        out[name] = {"weight_bytes": nbytes(ms), "rows": per}
    print(
        json.dumps(
            {
                "benchmark": "cpu_kernels",
                "cpu": cpu_info(),
                "kernel_isa": quant_cpu.kernel_isa(),
                "shape": "smollm2-135m",
                "layers": args.layers,
                "read_bandwidth_gbs": round(bandwidth, 2),
                "call_overhead_us": overhead,
                "formats": out,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
