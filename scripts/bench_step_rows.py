"""One engine step's time by row count: where batched decode has a cliff.

For each of the runner's decode buckets of T rows (T = S = 1, 2, 4, 8, 16, ... up to ``--max-rows``), the median time of one
step of SmolLM2-135M (``ModelRunner.prime``: the bucket's compiled model program and its sampler on dummy
inputs; the attention sees no context, so what is timed is the matmuls and the rest of the layer), its p99, and
the time per row. A row count that costs more per row than a smaller one is a cliff (issue 31: "every row
count from 1 to 64 costs no more per row than the one before"). One JSON object on stdout, with the CPU
and the kernel's ISA path; ``JAXSERVE_KERNEL_ISA=avx2_float`` (etc.) times another path on the same machine.

    python scripts/bench_step_rows.py [--weight-quant int8] [--runs 15] [--max-rows 16]

``JAXSERVE_QUANT_THREADS`` sets the kernels' threads, ``JAXSERVE_KERNEL_MAX_ROWS`` the most rows they take (``runtime.quant.cpu``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--gguf", default=None, help="a GGUF file instead of the preset's")
    p.add_argument("--weight-quant", default="int8", help="none | int8 | int4 | gguf")
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--max-rows", type=int, default=16, help="the largest decode bucket (max_num_seqs)")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if args.max_rows < 1:
        p.error("--max-rows must be at least 1")

    from runtime.api import EngineConfig
    from runtime.engine.llm_engine import LLMEngine
    from runtime.platform import configure_xla, cpu_info
    from runtime.quant import cpu as quant_cpu
    from runtime.worker.model_runner import enable_compilation_cache

    configure_xla()
    enable_compilation_cache()
    config = EngineConfig(
        model=args.model,
        gguf_path=args.gguf,
        dtype="float32",
        weight_quant=args.weight_quant,
        max_num_seqs=args.max_rows,
        max_num_batched_tokens=max(16, args.max_rows),
        max_model_len=256,
        num_blocks=max(64, 2 * args.max_rows),
    )
    engine = LLMEngine(config)
    runner = engine.runner
    engine.warmup()
    rows = {}
    for t, s in runner.buckets:
        if t != s:  # the decode buckets: one token a sequence
            continue
        runner.prime(t, s)  # the first run of a program is not timed
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            runner.prime(t, s)
            times.append(time.perf_counter() - start)
        ms = statistics.median(times) * 1e3
        p99 = statistics.quantiles(times, n=100, method="inclusive")[98] * 1e3 if len(times) > 1 else ms
        rows[str(t)] = {"ms": round(ms, 2), "ms_p99": round(p99, 2), "ms_per_row": round(ms / t, 2)}
        print(f"{t:3d} rows: {ms:7.2f} ms a step, {ms / t:6.2f} ms a row", file=sys.stderr)
    per_row = [r["ms_per_row"] for r in rows.values()]
    cliffs = [k for (k, r), prev in zip(list(rows.items())[1:], per_row) if r["ms_per_row"] > prev]
    out = {
        "benchmark": "step_rows",
        "model": args.model,
        "weight_quant": args.weight_quant,
        "attention_backend": engine.attention_backend,
        "runs": args.runs,
        "threads": quant_cpu.THREADS,
        "kernel_max_rows": {kind: quant_cpu.max_kernel_rows(kind) for kind in (0, 1, 2, 3)},
        "cpu": cpu_info(),
        "kernel_isa": quant_cpu.kernel_isa() if quant_cpu.kernel_available() else None,
        "rows": rows,
        "cliffs": cliffs,  # row counts that cost more per row than the count before them
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
