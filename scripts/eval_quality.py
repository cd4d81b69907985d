"""What each precision costs in quality: every weight x KV-cache precision against the float32 model.

For each combination, the corpus (data/corpus.md, its sources named at its top; one document per
section) is scored teacher-forced through the serving engine itself (``LLMEngine.score``: the same
model code, attention backend and paged KV cache as serving, prefilled in chunks so later tokens read
earlier ones back from the possibly quantized cache). Against the float32 / float32-KV reference:

- next-token agreement: the share of positions where the top-1 token is the same;
- KL divergence KL(reference || quantized) of the next-token distributions, mean over positions (nats);
- perplexity of the corpus under each precision (the reference's too), and the largest |logit| gap.

    python scripts/eval_quality.py [--model smollm2-135m] [--weights none,int8,int4,gguf] [--kv float32,int8]
                                   [--chunk 128] [--out out/eval_quality.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def documents(path: Path) -> list[tuple[str, str]]:
    """(title, text) per '## ' section of the corpus file."""
    docs, title, lines = [], None, []
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            if title and "".join(lines).strip():
                docs.append((title, "\n".join(lines).strip()))
            title, lines = line[3:].strip(), []
        elif title is not None:
            lines.append(line)
    if title and "".join(lines).strip():
        docs.append((title, "\n".join(lines).strip()))
    return docs


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def compare(ref: np.ndarray, got: np.ndarray, next_ids: np.ndarray) -> dict:
    """ref/got logits [T, V] for positions whose next token is next_ids [T]."""
    lp_ref, lp_got = log_softmax(ref), log_softmax(got)
    kl = (np.exp(lp_ref) * (lp_ref - lp_got)).sum(axis=-1)
    return {
        "agree": (ref.argmax(-1) == got.argmax(-1)),
        "kl": kl,
        "nll": -lp_got[np.arange(len(next_ids)), next_ids],
        "max_abs_logit_diff": float(np.abs(ref - got).max()),
    }


# Which is which: our INT8 / INT4 quantize the dequantized file again (a second rounding, meant for float
# sources); gguf runs the file's own blocks (the same values as the float32 reference).
WEIGHT_SOURCES = {
    "none": "the file's blocks dequantized to float32 (the reference)",
    "int8": "float32 re-quantized to our INT8 grid",
    "int4": "float32 re-quantized to our INT4 grid",
    "gguf": "the file's own blocks (Q4_1 / Q8_0 for SmolLM2), as stored",
}


def engine_kwargs(weights: str, kv: str) -> dict:
    """The EngineConfig fields for one precision combination (fields checked against the dataclass)."""
    from runtime.api import EngineConfig

    fields = {f.name for f in dataclasses.fields(EngineConfig)}
    kw: dict = {}
    if weights != "none":
        if "weight_quant" not in fields:
            raise SystemExit("this engine has no weight quantization (EngineConfig.weight_quant)")
        kw["weight_quant"] = weights
    if kv != "float32":
        key = "kv_quant" if "kv_quant" in fields and kv in ("int8", "fp8") else "kv_dtype"
        kw[key] = kv
    return kw


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--corpus", default="data/corpus.md")
    p.add_argument(
        "--weights",
        default="none,int8,int4,gguf",
        help="weight precisions: none = the file dequantized to float32; int8 / int4 = that float32 quantized again "
        "to our grids; gguf = the file's own blocks",
    )
    p.add_argument("--kv", default="float32,int8", help="KV-cache precisions")
    p.add_argument("--chunk", type=int, default=128, help="prefill chunk (tokens) while scoring")
    p.add_argument("--out", default="out/eval_quality.json")
    args = p.parse_args(argv)

    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    from runtime.api import EngineConfig
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    loaded = load_gguf(resolve_gguf(args.model))
    docs = documents(ROOT / args.corpus)
    combos = [(w, k) for w in args.weights.split(",") for k in args.kv.split(",")]
    if combos[0] != ("none", "float32"):
        combos.insert(0, ("none", "float32"))
    ids_per_doc = None
    reference: list[np.ndarray] = []
    results = []
    for weights, kv in combos:
        t0 = time.perf_counter()
        cfg = EngineConfig(
            model=args.model,
            max_num_seqs=1,
            max_num_batched_tokens=args.chunk,
            max_model_len=2048,
            kv_cache_bytes=128 << 20,
            enable_prefix_caching=False,
            **engine_kwargs(weights, kv),
        )
        eng = LLMEngine(cfg, loaded=loaded)
        if ids_per_doc is None:
            ids_per_doc = [eng.tokenizer.encode(text)[:2048] for _, text in docs]
        parts = []
        for d, ids in enumerate(ids_per_doc):
            logits = eng.score(ids, chunk=args.chunk)[:-1]  # the last position has no next token
            if (weights, kv) == ("none", "float32"):
                reference.append(logits)
            parts.append(compare(reference[d], logits, np.asarray(ids[1:])))
        agree = np.concatenate([x["agree"] for x in parts])
        kl = np.concatenate([x["kl"] for x in parts])
        nll = np.concatenate([x["nll"] for x in parts])
        row = {
            "weights": weights,
            "weights_source": WEIGHT_SOURCES.get(weights, weights),
            "kv": kv,
            "tokens_scored": int(len(agree)),
            "next_token_agreement": float(agree.mean()),
            "kl_mean": float(kl.mean()),
            "kl_p99": float(np.percentile(kl, 99)),
            "perplexity": float(np.exp(nll.mean())),
            "max_abs_logit_diff": max(x["max_abs_logit_diff"] for x in parts),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        results.append(row)
        print(
            f"weights {weights:>5} kv {kv:>8}: agreement {row['next_token_agreement']:.4f}  "
            f"KL {row['kl_mean']:.5f}  ppl {row['perplexity']:.3f}",
            file=sys.stderr,
        )
        del eng
    report = {
        "eval": "quality",
        "cpu": cpu_info(),
        "model": args.model,
        "corpus": args.corpus,
        "documents": [t for t, _ in docs],
        "reference": "weights float32, KV float32",
        "results": results,
    }
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
