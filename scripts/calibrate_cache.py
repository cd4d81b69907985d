"""Write the semantic cache's calibration table (``gateway/cache/models/calibration.json``).

    python scripts/calibrate_cache.py [--out gateway/cache/models/calibration.json]

For each checker (cross_encoder, numbers, none) and kind of scope (single questions; conversations as
``cache.conversation_match: semantic`` keys them), every (cosine, checker) threshold pair of the grid is
counted on the calibration split: the dev splits of ``tests/data/cache`` (the team's dev split and the
blind batches' dev parts; test splits are never read). ``gateway/cache/calibration.py`` chooses from it
under the operator's ``cache.max_false_hit_rate``. The table records the checker model's and the data
files' hashes, so a retrained checker without a new table is visible.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import eval_cache  # noqa: E402

from gateway.cache.calibration import DEFAULT_TABLE  # noqa: E402
from gateway.cache.checker import CHECKERS, DEFAULT_MODELS  # noqa: E402
from runtime.platform import cpu_info  # noqa: E402


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(DEFAULT_TABLE))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--checker-model", help="the cross-encoder's ONNX file (default: the shipped one; a candidate)")
    args = p.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedder = eval_cache.make_embedder("onnx")
    files = eval_cache.split_files(blind=False)["dev"]
    table = {
        "what": "cache calibration: per checker and kind, [cosine, checker, false hits, negatives, hits, positives]"
        " at each grid point, on the calibration (dev) split",
        "calibration_files": {str(f.relative_to(ROOT)): sha(f) for f in files},
        "checker_model": [
            sha(Path(x)) for x in (args.checker_model.split(",") if args.checker_model else DEFAULT_MODELS)
        ],
        "conversations_keyed_as": "semantic",
        "cpu": cpu_info(),
        "tables": {},
    }
    for name in CHECKERS:
        ns = eval_cache.calibration_args(name, args.checker_model, args.threads)
        res = eval_cache.evaluate(ns, embedder)
        table["tables"][name] = {
            kind: {"reply": res["sweep"][kind]["reply"], "rows": rows} for kind, rows in res["calibration_rows"].items()
        }
        print(
            f"{name}: " + ", ".join(f"{k} {len(v['rows'])} rows" for k, v in table["tables"][name].items()), flush=True
        )
    Path(args.out).write_text(json.dumps(table, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
