"""Choose the cache's judge: each candidate cross-encoder's recall at the operator's bound on the
calibration (dev) split, side by side. Test splits are never read here.

    python scripts/judge_candidates.py NAME=PATH.onnx[+parse] [...] [--bound 0.01] [--out FILE]

For each candidate: every dev pair is scored (the shipped embedder's cosine, the candidate's score, the
rules in front of it), the calibration rows are counted on the grid of ``scripts/eval_cache.py``, and
``calibration.choose`` picks the thresholds the gateway would run under the bound. The figure a candidate
is chosen by is that row's recall (singles; conversations under "semantic" matching, reported beside).
It is measured on the split the thresholds were chosen on, so it is optimistic for every candidate
alike: good for ranking them, not a result (``scripts/eval_cache.py --blind`` gives those). Writes
``docs/results/judge_candidates.json`` with the CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import eval_cache  # noqa: E402

from gateway.cache.calibration import CalibrationError, Row, choose, upper  # noqa: E402
from runtime.platform import cpu_info  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "candidates",
        nargs="+",
        help="NAME=PATH.onnx (A.onnx,B.onnx: an ensemble), or NAME=PATH.onnx+parse (the parse veto)",
    )
    p.add_argument("--bound", type=float, default=0.01)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "docs" / "results" / "judge_candidates.json"))
    args = p.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedder = eval_cache.make_embedder("onnx")
    files = eval_cache.split_files(blind=False)["dev"]
    out = {
        "what": "judge candidates: recall at the bound on the calibration (dev) split (scripts/judge_candidates.py)",
        "bound": args.bound,
        "calibration_files": [str(f.relative_to(ROOT)) for f in files],
        "candidates": {},
        "cpu": cpu_info(),
    }
    for spec in args.candidates:
        name, _, path = spec.partition("=")
        path, plus, _ = path.partition("+parse")
        t0 = time.perf_counter()
        ns = eval_cache.calibration_args("cross_encoder", path, args.threads, parse_rule=bool(plus))
        res = eval_cache.evaluate(ns, embedder)
        row = {
            "model": path,
            "parse_rule": bool(plus),
            "sha256_16": [hashlib.sha256(Path(x).read_bytes()).hexdigest()[:16] for x in path.split(",")],
        }
        for kind, rows in res["calibration_rows"].items():
            table = [Row(*r) for r in rows]
            row.setdefault("recall_at", {})[kind] = {}
            for b in (0.005, 0.01, 0.02, 0.05):
                try:
                    row["recall_at"][kind][str(b)] = round(choose(table, b).recall, 4)
                except CalibrationError:
                    row["recall_at"][kind][str(b)] = None
            try:
                best = choose(table, args.bound)
                row[kind] = {
                    "thresholds": [best.cosine, best.checker],
                    "recall": round(best.recall, 4),
                    "hits": best.hits,
                    "positives": best.positives,
                    "false_hits": best.false_hits,
                    "negatives": best.negatives,
                    "upper_95": round(best.upper, 4),
                }
            except CalibrationError as exc:
                n = max(r.negatives for r in table)
                row[kind] = {"error": str(exc), "smallest_upper": upper(0, n)}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        out["candidates"][name] = row
        print(name, json.dumps({k: row.get(k) for k in ("single", "conversation", "recall_at")}), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
