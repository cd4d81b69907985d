"""Validate train_singles.jsonl: parse, labels, kinds, duplicates."""
import json, os, re
from collections import Counter
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_singles.jsonl")
rows = []
with open(path, encoding="utf-8") as f:
    for i, line in enumerate(f, 1):
        r = json.loads(line)
        assert set(r) == {"a", "b", "label", "kind"}, (i, r)
        assert isinstance(r["a"], str) and isinstance(r["b"], str) and r["a"].strip() and r["b"].strip(), (i, r)
        assert r["label"] in (0, 1), (i, r)
        assert r["a"] != r["b"], (i, r)
        rows.append(r)
ordered = Counter((r["a"], r["b"]) for r in rows)
unordered = Counter(frozenset((r["a"], r["b"])) for r in rows)
norm = lambda s: " ".join(re.sub(r"[^\w\s]", " ", s.lower()).split())
loose = Counter(frozenset((norm(r["a"]), norm(r["b"]))) for r in rows)
print("rows", len(rows))
print("labels", dict(Counter(r["label"] for r in rows)))
print("kinds x label")
for (k, l), n in sorted(Counter((r["kind"], r["label"]) for r in rows).items()):
    print(f"  {k:18s} {l} {n}")
print("duplicate (a,b) ordered:", sum(v - 1 for v in ordered.values() if v > 1))
print("duplicate {a,b} unordered:", sum(v - 1 for v in unordered.values() if v > 1))
print("near-duplicates after lowercasing/punct removal (info):", sum(v - 1 for v in loose.values() if v > 1))
