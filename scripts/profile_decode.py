"""Where a batch-1 decode step's time goes: step time split host / device, and XLA:CPU ops by kind.

Runs SmolLM2 through ``Generator`` (one request), times ``prepare`` (host: the step's inputs) and the
jitted step, then traces 10 decode steps with ``jax.profiler`` and sums the trace's events by op kind
(a ``.123`` suffix dropped), per step. Figures quoted in docs/DECODE.md.

    python scripts/profile_decode.py [--weight-quant int8] [--max-model-len 512] [--tokens 64]
                                     [--attention-backend auto]
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--weight-quant", default="int8")
    p.add_argument("--max-model-len", type=int, default=512)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--attention-backend", default="auto", help="EngineConfig.attention_backend (auto, xla, cpu, ...)")
    args = p.parse_args(argv)
    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    import jax

    from runtime.api import SamplingParams
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    gen = Generator(
        "smollm2-135m",
        weight_quant=args.weight_quant,
        max_model_len=args.max_model_len,
        attention_backend=args.attention_backend,
    )
    runner = gen.engine.runner
    times = {"prepare_ms": [], "step_ms": []}

    prepare, run = runner.prepare, runner.run

    def timed(fn, key):  # ModelRunner.prepare / ModelRunner.run, timed
        def wrapper(*a, **kw):
            t0 = time.perf_counter()
            result = fn(*a, **kw)
            times[key].append((time.perf_counter() - t0) * 1e3)
            return result

        return wrapper

    runner.prepare, runner.run = timed(prepare, "prepare_ms"), timed(run, "step_ms")
    ids = gen.encode_prompt("Write a short story about a lighthouse keeper.", chat=True)
    gen.generate(ids, SamplingParams(max_tokens=args.tokens, ignore_eos=True))  # warm-up
    for v in times.values():
        v.clear()
    _, stats = gen.generate(ids, SamplingParams(max_tokens=args.tokens, ignore_eos=True))
    result = {
        "cpu": cpu_info(),
        "weight_quant": args.weight_quant,
        "attention_backend": args.attention_backend,
        "max_model_len": args.max_model_len,
        "decode_tok_s": round(stats.decode_tokens_per_s, 1),
        **{k: round(statistics.median(v[1:]), 3) for k, v in times.items()},
    }
    steps = 10
    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d):
            gen.generate(ids, SamplingParams(max_tokens=steps + 1, ignore_eos=True))
        events = json.load(gzip.open(glob.glob(f"{d}/**/*.trace.json.gz", recursive=True)[0]))["traceEvents"]
    ops = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        name = e.get("name", "")
        if e.get("ph") == "X" and not name.startswith("$") and "Execute" not in name and "Pjit" not in name:
            kind = re.sub(r"\.\d+$", "", name)
            ops[kind][0] += 1
            ops[kind][1] += e["dur"]
    top = sorted(ops.items(), key=lambda kv: -kv[1][1])[: args.top]
    result["traced_ops_per_step"] = {k: {"count": n // steps, "ms": round(d / 1e3 / steps, 3)} for k, (n, d) in top}
    result["note"] = "traced figures include the profiler's own overhead: compare kinds, not totals"
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
