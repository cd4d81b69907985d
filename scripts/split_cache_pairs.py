"""Assign cache evaluation pairs to the dev or the test split, once, by a hash of the pair's text.

    python scripts/split_cache_pairs.py [--out-dir DIR] [--by-stored] [--test-share S] SOURCE.jsonl [SOURCE.jsonl ...]

``--out-dir`` (default ``tests/data/cache``) takes another pair of splits: the blind batches go to
``tests/data/cache/blind/{dev,test}.jsonl``. ``--by-stored`` hashes the stored side ``a`` alone instead of the
pair, so that every pair built on one stored question (or conversation) lands in the same split: a writer
who pairs one stored question with several new ones would otherwise put that question in both splits, and
a threshold tuned on dev would have seen half of a test pair (the second blind batch,
``tests/data/cache/blind2``, is split so). A pair with a ``scenario`` key (a writer's id for the hand-written
scenario it was built from) is hashed by that instead, so that every pair of one scenario lands together.
``--test-share`` (default 0.5) is the share of hash values that go to test: the second blind batch gives
a third to test, so that its calibration part, with the earlier dev splits, holds more than 1,000
look-alikes per kind (issue 44).

Each pair goes to ``tests/data/cache/dev.jsonl`` or ``tests/data/cache/test.jsonl`` by the first byte of
sha256 over its canonical JSON (``a``, ``b``): the assignment of a pair never depends on which other
pairs exist or on their order, so adding pairs later leaves every earlier assignment where it was.
A pair already present in either split is skipped (running the script twice changes nothing).

The test split is frozen: nothing (threshold, checker, training data, rules) may be tuned while looking
at it; ``scripts/eval_cache.py`` picks its thresholds on dev and only reports test.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "cache"


def pair_key(row: dict) -> str:
    return json.dumps([row["a"], row["b"]], sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def split_of(row: dict, by_stored: bool = False, test_share: float = 0.5) -> str:
    stored = row.get("scenario", row["a"])  # a writer's scenario id, where it gives one, groups its pairs
    key = json.dumps(stored, sort_keys=True, ensure_ascii=False, separators=(",", ":")) if by_stored else pair_key(row)
    return "test" if hashlib.sha256(key.encode()).digest()[0] < round(256 * test_share) else "dev"


def main(argv: list[str]) -> int:
    out = OUT
    by_stored, test_share = False, 0.5
    while argv[:1] in (["--out-dir"], ["--by-stored"], ["--test-share"]):
        if argv[0] == "--by-stored":
            by_stored, argv = True, argv[1:]
        elif len(argv) >= 2 and argv[0] == "--test-share":
            test_share, argv = float(argv[1]), argv[2:]
            if not 0 < test_share < 1:
                print("error: --test-share must be in (0, 1)", file=sys.stderr)
                return 2
        elif len(argv) >= 2:
            out, argv = Path(argv[1]), argv[2:]
        else:
            break
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for name in ("dev", "test"):
        path = out / f"{name}.jsonl"
        if path.exists():
            seen.update(
                pair_key(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            )
    added = {"dev": 0, "test": 0}
    outs = {name: (out / f"{name}.jsonl").open("a", encoding="utf-8") for name in ("dev", "test")}
    try:
        for src in argv:
            for n, line in enumerate(Path(src).read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                row = json.loads(line)
                for key in ("a", "b", "same_answer"):
                    if key not in row:
                        raise SystemExit(f"{src}:{n}: missing {key!r}")
                key = pair_key(row)
                if key in seen:
                    continue
                seen.add(key)
                name = split_of(row, by_stored, test_share)
                outs[name].write(json.dumps(row, ensure_ascii=False) + "\n")
                added[name] += 1
    finally:
        for f in outs.values():
            f.close()
    print(json.dumps({"added": added, "out": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
