"""Leak check of the cache checker's training data: no training pair may sit within word-Jaccard
``--threshold`` (0.7) of an evaluation pair (dev, test, the blind batches) on both sides.

    python scripts/check_cache_leaks.py [--train DIR] [--eval FILE ...] [--threshold 0.7]

Prints a JSON report and exits 1 when a training pair is that close to an evaluation pair; ``make test``
runs it through ``tests/gateway/cache/test_training_leak.py``. A side is its text (a question, or every
message of a conversation joined); words are lower-case runs of letters, digits and apostrophes. Both
pairings count (a~a' and b~b', or a~b' and b~a'). The product of two sparse word matrices gives every
intersection at once, so the full check runs in about a second.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRAIN_DIR = ROOT / "data" / "cache_checker"
EVAL_DIR = ROOT / "tests" / "data" / "cache"
_WORD = re.compile(r"[a-z0-9']+")


def eval_files(eval_dir: Path = EVAL_DIR) -> list[Path]:
    """Every split a figure is quoted on: dev and test, and the blind batches' splits (``blind/``, and the
    second batch's calibration and test splits, ``blind2/``), and the learning replay's stream
    (``stream/``: families of intents, read as every two phrasings of one family)."""
    return (
        sorted(eval_dir.glob("dev*.jsonl"))
        + sorted(eval_dir.glob("test*.jsonl"))
        + sorted(eval_dir.glob("blind/*.jsonl"))
        + sorted(eval_dir.glob("blind2/*.jsonl"))
        + sorted(eval_dir.glob("stream/*.jsonl"))
    )


def side_text(x) -> str:
    if isinstance(x, str):
        return x
    return "\n".join(str(m.get("content") or "") for m in x)


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower().replace("\u2019", "'")))


def read_pairs(paths: Iterable[Path]) -> list[tuple[str, int, str, str]]:
    """(file name, line number, a, b) of every pair in ``paths``."""
    out = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if "intents" in row:  # a stream family: every two of its phrasings (one intent's or look-alikes')
                qs = [q for intent in row["intents"] for q in intent["questions"]]
                out.extend((path.name, n, a, b) for i, a in enumerate(qs) for b in qs[i + 1 :])
                continue
            out.append((path.name, n, side_text(row["a"]), side_text(row["b"])))
    return out


def _matrix(texts: Sequence[Sequence[int]], n_rows: int, n_cols: int):
    from scipy.sparse import csr_matrix

    rows = [i for i, ws in enumerate(texts) for _ in ws]
    cols = [w for ws in texts for w in ws]
    return csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n_rows, n_cols))


def close_sides(eval_sets: Sequence[frozenset[str]], train_sets: Sequence[frozenset[str]], threshold: float) -> set:
    """{(eval index, train index)} with word-Jaccard >= threshold (empty sides never match).

    Prefix filtering (the AllPairs join): words are ordered rarest first over both collections, and each
    side keeps its first n - ceil(threshold * n) + 1 words. Two sides with Jaccard >= threshold share at
    least threshold * max(n_a, n_b) words, so their prefixes must meet; the candidates come from one
    product of the sparse prefix matrices (rare words: few pairs), and each is then checked exactly. A
    product of the whole word sets, as before, pairs every side with every other through "the" and
    "how": with 55,000 training pairs that took minutes and gigabytes instead of seconds."""
    import math
    from collections import Counter

    freq = Counter(w for s in (*eval_sets, *train_sets) for w in s)
    rank = {w: i for i, (w, _) in enumerate(sorted(freq.items(), key=lambda x: (x[1], x[0])))}

    def prefix(s: frozenset[str]) -> list[int]:
        ids = sorted(rank[w] for w in s)
        return ids[: len(ids) - math.ceil(threshold * len(ids) - 1e-9) + 1] if ids else []

    e = _matrix([prefix(s) for s in eval_sets], len(eval_sets), len(rank))
    t = _matrix([prefix(s) for s in train_sets], len(train_sets), len(rank))
    cand = (e @ t.T).tocoo()
    out = set()
    for i, j in zip(cand.row.tolist(), cand.col.tolist()):
        a, b = eval_sets[i], train_sets[j]
        inter = len(a & b)
        if inter and inter / (len(a) + len(b) - inter) >= threshold:
            out.add((i, j))
    return out


def leaks(train_paths: Sequence[Path], eval_paths: Sequence[Path], threshold: float = 0.7) -> list[dict]:
    train, evals = read_pairs(train_paths), read_pairs(eval_paths)
    if not train or not evals:
        return []
    t_sets = [words(x) for _, _, a, b in train for x in (a, b)]  # pair i: sides 2i, 2i+1
    e_sets = [words(x) for _, _, a, b in evals for x in (a, b)]
    close = close_sides(e_sets, t_sets, threshold)
    near: dict[int, set[int]] = {}
    for ei, ti in close:
        near.setdefault(ei, set()).add(ti)
    found = []
    for k, (ef, en, _, _) in enumerate(evals):
        na, nb = near.get(2 * k, set()), near.get(2 * k + 1, set())
        for ti in sorted(na):
            j, side = divmod(ti, 2)
            partner = 2 * j + (1 - side)  # the other side of the same training pair
            if partner in nb:
                tf, tn, ta, tb = train[j]
                found.append({"eval": f"{ef}:{en}", "train": f"{tf}:{tn}"})
    return found


def drop(found: list[dict], train_dir: Path) -> int:
    """Rewrite the training files without every pair ``found`` names; returns how many went."""
    gone: dict[str, set[int]] = {}
    for f in found:
        name, line = f["train"].rsplit(":", 1)
        gone.setdefault(name, set()).add(int(line))
    for name, lines in gone.items():
        path = train_dir / name
        kept = [x for n, x in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if n not in lines]
        path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return sum(len(v) for v in gone.values())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", default=str(TRAIN_DIR), help="folder of train_*.jsonl")
    p.add_argument("--eval", nargs="*", help="evaluation files (default: dev, test and the blind splits)")
    p.add_argument("--threshold", type=float, default=0.7)
    p.add_argument("--drop", action="store_true", help="remove the flagged pairs from the training files")
    args = p.parse_args(argv)
    train_paths = sorted(Path(args.train).glob("train_*.jsonl"))
    eval_paths = [Path(x) for x in args.eval] if args.eval else eval_files()
    found = leaks(train_paths, eval_paths, args.threshold)
    report = {
        "threshold": args.threshold,
        "train_files": [x.name for x in train_paths],
        "eval_files": [str(x.relative_to(ROOT)) if x.is_relative_to(ROOT) else str(x) for x in eval_paths],
        "leaks": len(found),
        "eval_pairs_with_a_leak": len({f["eval"] for f in found}),
        "train_pairs_flagged": len({f["train"] for f in found}),
        "examples": found[:20],  # file:line references only: the check prints no evaluation text
    }
    if args.drop and found:
        report["dropped"] = drop(found, Path(args.train))
        print(json.dumps(report, indent=1))
        return 0
    print(json.dumps(report, indent=1))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
