"""How XLA:CPU rounds RoPE's rotation here (issue 47, item 3): for each shape, whether the jitted
``runtime.models.common.apply_rope`` gives ``fma(x1, c, -(x2 s))`` (the product x1 c unrounded, as the CPU
kernel ``rope_write_attention_cpu`` computes) or ``round(x1 c) - round(x2 s)`` (each product rounded).

Inputs are drawn so that float64 holds every exact value involved (|x| in [0.5, 2), |c|, |s| in [0.25, 1]:
products within 2^5 of each other, so a difference of a product and a float32 spans under 53 bits), so the
two candidates are computed exactly in float64 and rounded once to float32.

Found with it: jax 0.10.2 contracts at every shape; jax 0.12.0.1 under ``XLA_FLAGS=--xla_cpu_max_isa=AVX2``
(what an AVX2-only CPU gets) rounds each product where the rotation's loop is vectorized (4 heads of 16 at 16
rows or more: ``vmulps`` + ``vsubps`` in the fusion's object code) and contracts elsewhere (``vfmsub231ss``).

    python scripts/rope_rounding.py [--out docs/results/rope_rounding_jax0.12.0.1_avx2.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = [(t, h, d) for t in (1, 3, 16, 17, 100) for h in (1, 2, 3, 4, 8, 9) for d in (16, 64, 128, 256)]


def candidates(x: np.ndarray, c: np.ndarray, s: np.ndarray) -> dict[str, np.ndarray]:
    """The rotation rounded each way, exactly (float64 then one rounding to float32)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].astype(np.float64), x[..., half:].astype(np.float64)
    cc, ss = c[:, None, :].astype(np.float64), s[:, None, :].astype(np.float64)

    def r(a):
        return a.astype(np.float32).astype(np.float64)

    return {
        "fma": np.concatenate([r(x1 * cc - r(x2 * ss)), r(x2 * cc + r(x1 * ss))], -1).astype(np.float32),
        "products_rounded": np.concatenate([r(r(x1 * cc) - r(x2 * ss)), r(r(x2 * cc) + r(x1 * ss))], -1).astype(
            np.float32
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args()
    import jax

    from runtime.models.common import apply_rope
    from runtime.platform import cpu_info

    rng = np.random.default_rng(0)

    def draw(shape, lo, hi):
        return (rng.uniform(lo, hi, shape) * rng.choice([-1, 1], shape)).astype(np.float32)

    rope = jax.jit(apply_rope)
    by_shape = {}
    for t, h, d in SHAPES:
        x, c, s = draw((t, h, d), 0.5, 2.0), draw((t, d // 2), 0.25, 1.0), draw((t, d // 2), 0.25, 1.0)
        y = np.asarray(rope(x, c, s))
        match = [name for name, ref in candidates(x, c, s).items() if np.array_equal(ref, y)]
        by_shape[f"{t}x{h}x{d}"] = match[0] if match else "neither"
    counts = {k: sum(v == k for v in by_shape.values()) for k in sorted(set(by_shape.values()))}
    cpu = cpu_info()
    report = {
        "jax": jax.__version__,
        "python": sys.version.split()[0],
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "cpu": {k: cpu[k] for k in ("model", "logical_cores", "isa_path", "simd_flags")},
        "shapes": len(by_shape),
        "counts": counts,
        "not_fma": {k: v for k, v in by_shape.items() if v != "fma"},
    }
    text = json.dumps(report)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
