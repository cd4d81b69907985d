"""Where a batch-1 decode step's time goes: step time split host / device, and XLA:CPU ops by kind.

Runs SmolLM2 through ``Generator`` (one request), times ``prepare`` (host: the step's inputs) and the
jitted step, then traces 10 decode steps with ``jax.profiler`` and sums the trace's events by op kind
(a ``.123`` suffix dropped), per decode step (the traced prefill left out); ``xla_ops_per_step`` counts
the step's XLA:CPU ops (events of its two programs, ``jit_logits_fn`` and ``jit_sample_step``; an op inside a loop
body once per iteration).
``attention_ms_per_step``: the backend's attention alone, timed on one decode row at the timed run's
mean context over every layer's cache (one jitted function chaining the layers); its share of
``step_ms``. ``matmul_ms_per_step``: the step's weight matrices alone (every matrix of the served parameter
tree, the LM head included, one row of x each, chained as the layers are, through the same matmul the
model calls), timed after the run; ``non_matmul_share_of_step`` is ``1 - matmul_ms_per_step / step_ms``:
the share of a step that is not reading weights (norms, RoPE, KV writes, attention, dispatch).
Figures quoted in docs/DECODE.md.

    python scripts/profile_decode.py [--weight-quant int8] [--max-model-len 512] [--tokens 64]
                                     [--attention-backend auto]

``--compare-fusion N`` instead: three engines in one process, built with the layers' matrices as loaded
(``unfused``: q, k, v, gate, up apart), stacked (``stacked``: ``runtime.quant.weights.fuse_linears``, the
one-call kernels that need them declined) and as served (``fused``: stacked, the attention norm with q/k/v,
RoPE with the KV write and attention (``--attention-backend cpu``), and the attention output's residual add
with the MLP block one call each), then N rounds
that each time one generation of ``--tokens`` tokens on each engine in turn (so load on a shared machine
falls on all three alike): per engine the median decode tok/s and its rounds, and XLA ops per step.
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
    p.add_argument("--compare-fusion", type=int, default=0, metavar="ROUNDS")
    args = p.parse_args(argv)
    if args.compare_fusion:
        return compare_fusion(args)
    from runtime.platform import configure_xla, cpu_info

    configure_xla()

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
        "small_token_buckets": list(runner.small_token_buckets),  # a decode step's rows: 1 if 1 is here, else 16
        "decode_tok_s": round(stats.decode_tokens_per_s, 1),
        **{k: round(statistics.median(v[1:]), 3) for k, v in times.items()},
    }
    decode = decode_step_events(gen, ids, steps=10)
    result["xla_ops_per_step"] = round(statistics.mean(len(run) for run in decode))
    result["attention_ms_per_step"] = time_attention(runner, args.attention_backend, len(ids) + args.tokens // 2)
    result["attention_share_of_step"] = round(result["attention_ms_per_step"] / result["step_ms"], 3)
    result["matmul_ms_per_step"] = time_matmuls(runner)
    result["non_matmul_share_of_step"] = round(1 - result["matmul_ms_per_step"] / result["step_ms"], 3)
    ops = collections.defaultdict(lambda: [0, 0.0])
    for e in (e for run in decode for e in run):
        kind = re.sub(r"\.\d+$", "", e["name"])
        ops[kind][0] += 1
        ops[kind][1] += e["dur"]
    n = len(decode)
    top = sorted(ops.items(), key=lambda kv: -kv[1][1])[: args.top]
    result["traced_ops_per_step"] = {k: {"count": c // n, "ms": round(d / 1e3 / n, 3)} for k, (c, d) in top}
    result["note"] = (
        "decode steps only; traced figures include the profiler's own overhead and a loop's time includes its "
        "body's ops: compare kinds, not totals"
    )
    print(json.dumps(result))
    return 0


# A step's XLA programs (runtime/worker/model_runner.py, StepFns): the model per bucket, then the sampler per S.
STEP_MODULES = ("jit_logits_fn", "jit_sample_step")


def decode_step_events(gen, ids, steps: int) -> list[list[dict]]:
    """The profiler's events of each decode step's two programs (``STEP_MODULES``: the model's, then the
    sampler's; one run_id per execution) as one list per step (the first,
    the prefill that samples the first token, left out). Ops inside a loop body count once per iteration."""
    import jax

    from runtime.api import SamplingParams

    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d):
            gen.generate(ids, SamplingParams(max_tokens=steps + 1, ignore_eos=True))
        events = json.load(gzip.open(glob.glob(f"{d}/**/*.trace.json.gz", recursive=True)[0]))["traceEvents"]
    runs = collections.defaultdict(list)
    for e in events:
        a = e.get("args", {})
        if e.get("ph") == "X" and a.get("hlo_module") in STEP_MODULES:
            runs[(a["hlo_module"], a.get("run_id"))].append(e)
    steps: list[list[dict]] = []
    for (module, _), run in sorted(runs.items(), key=lambda kv: min(e["ts"] for e in kv[1])):
        if module == STEP_MODULES[0] or not steps:  # a step starts with its model program, then samples
            steps.append([])
        steps[-1].extend(run)
    return steps[1:]


def count_step_ops(gen, ids, steps: int = 4) -> int:
    """XLA:CPU ops a decode step runs, as in ``main``."""
    return round(statistics.mean(len(run) for run in decode_step_events(gen, ids, steps)))


def compare_fusion(args) -> int:
    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    from runtime.api import SamplingParams
    from runtime.engine import builder
    from runtime.engine.offline import Generator
    from runtime.quant import cpu as quant_cpu
    from runtime.worker import cpu_attention
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    fuse, gated_mlp, norm_matmul = builder.fuse_linears, quant_cpu.gated_mlp, quant_cpu.norm_matmul
    rope_write = cpu_attention.rope_write_attention_cpu
    variants = {"unfused": (False, False), "stacked": (True, False), "fused": (True, True)}
    gens = {}
    for name, (stack, one_call) in variants.items():  # the switches act while the engine loads and compiles
        builder.fuse_linears = fuse if stack else (lambda params: params)
        quant_cpu.gated_mlp = gated_mlp if one_call else (lambda *a, **k: None)
        quant_cpu.norm_matmul = norm_matmul if one_call else (lambda *a, **k: None)
        cpu_attention.rope_write_attention_cpu = rope_write if one_call else (lambda *a, **k: None)
        gens[name] = Generator(
            "smollm2-135m",
            weight_quant=args.weight_quant,
            max_model_len=args.max_model_len,
            attention_backend=args.attention_backend,
        )
        ids = gens[name].encode_prompt("Write a short story about a lighthouse keeper.", chat=True)
        gens[name].generate(ids, SamplingParams(max_tokens=args.tokens, ignore_eos=True))  # compiles every bucket
    builder.fuse_linears, quant_cpu.gated_mlp, quant_cpu.norm_matmul = fuse, gated_mlp, norm_matmul
    cpu_attention.rope_write_attention_cpu = rope_write
    sp = SamplingParams(max_tokens=args.tokens, ignore_eos=True, temperature=0.0)
    rates = {name: [] for name in gens}
    tokens = {}
    for _ in range(args.compare_fusion):
        for name, gen in gens.items():
            _, stats = gen.generate(ids, sp)
            rates[name].append(round(stats.decode_tokens_per_s, 1))
            tokens.setdefault(name, stats.token_ids)
    result = {
        "cpu": cpu_info(),
        "weight_quant": args.weight_quant,
        "attention_backend": args.attention_backend,
        "max_model_len": args.max_model_len,
        "tokens": args.tokens,
        "rounds": args.compare_fusion,
        "same_greedy_tokens": all(t == tokens["unfused"] for t in tokens.values()),
        "variants": {
            name: {
                "decode_tok_s_median": statistics.median(rates[name]),
                "step_ms_median": round(1e3 / statistics.median(rates[name]), 3),
                "decode_tok_s_rounds": rates[name],
                "xla_ops_per_step": count_step_ops(gen, ids),
            }
            for name, gen in gens.items()
        },
    }
    base = result["variants"]["unfused"]["decode_tok_s_median"]
    for v in result["variants"].values():
        v["speed_vs_unfused"] = round(v["decode_tok_s_median"] / base, 3)
    print(json.dumps(result))
    return 0


def time_matmuls(runner, reps: int = 30) -> float:
    """Median ms of one row of x through every weight matrix of the runner's parameter tree (each ``matvec``;
    a float [in, out] kernel: ``x @ w``), chained: each matrix's x waits for the previous output, as in a step."""
    import jax
    import jax.numpy as jnp

    from runtime.models.contracts import MatmulWeight

    def is_matrix(x):
        return isinstance(x, MatmulWeight)

    leaves = jax.tree_util.tree_leaves_with_path(runner.params, is_leaf=is_matrix)
    mats = [m for path, m in leaves if is_matrix(m) or (jnp.ndim(m) == 2 and "kernel" in jax.tree_util.keystr(path))]

    @jax.jit
    def chain(mats):
        y = jnp.zeros((1, 1), runner.dtype)
        for m in mats:
            k = m.shape[1] if is_matrix(m) else m.shape[0]
            x = jnp.ones((1, k), runner.dtype) + y[:, :1] * 0  # waits for the previous matmul
            y = m.matvec(x) if is_matrix(m) else x @ m
        return y

    chain(mats).block_until_ready()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        chain(mats).block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


def time_attention(runner, backend: str, kv_len: int, reps: int = 30) -> float:
    """Median ms of the backend's attention over every layer's cache for one decode row at ``kv_len``."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from runtime.models.kv_cache import AttentionMetadata
    from runtime.worker.attention import make_attend_fn

    cfg = runner.config
    attend = make_attend_fn(backend, sm_scale=cfg.attn_scale)
    pages = -(-kv_len // runner.block_size)
    table = np.zeros((1, runner.pages_per_seq), np.int32)
    table[0, :pages] = np.arange(1, pages + 1)
    md = AttentionMetadata(
        jnp.zeros(1, jnp.int32),
        jnp.array([kv_len], jnp.int32),
        jnp.asarray(table),
        jnp.array([0, 1], jnp.int32),
        jnp.array([1], jnp.int32),
    )

    @jax.jit
    def layers(q, caches):
        for k, v in caches:  # chained, as the layers are
            q = attend(q, k, v, md)
        return q

    q = jax.random.normal(jax.random.key(0), (1, cfg.num_heads, cfg.head_dim), runner.dtype)
    layers(q, runner.kv_caches).block_until_ready()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        layers(q, runner.kv_caches).block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


if __name__ == "__main__":
    sys.exit(main())
