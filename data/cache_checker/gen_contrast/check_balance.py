#!/usr/bin/env python3
"""Sanity checks on train_contrast.jsonl: label balance, per-family surface
similarity (token Jaccard) by label, identical-bag-of-words rate, conflicts."""
import json
import os
import statistics as st
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from lex_common import norm, pair_key  # noqa: E402

rows = [json.loads(l) for l in open(os.path.join(HERE, "..", "train_contrast.jsonl"), encoding="utf-8")]
print("pairs", len(rows), "labels", dict(Counter(r["label"] for r in rows)))
sim = defaultdict(list)
bag = Counter()
keys = defaultdict(set)
for r in rows:
    a, b = norm(r["a"]).split(), norm(r["b"]).split()
    j = len(set(a) & set(b)) / len(set(a) | set(b))
    fam = r["kind"].split("_")[0]
    sim[(fam, r["label"])].append(j)
    sim[("ALL", r["label"])].append(j)
    bag[r["label"]] += sorted(a) == sorted(b)
    keys[pair_key(r["a"], r["b"])].add(r["label"])
for k in sorted(sim):
    print("%-12s label=%d jaccard mean=%.3f median=%.3f n=%d" % (k[0], k[1], st.mean(sim[k]),
                                                                 st.median(sim[k]), len(sim[k])))
print("same bag of words:", dict(bag))
print("pairs with both labels:", sum(1 for v in keys.values() if len(v) > 1))
print("duplicate keys:", len(rows) - len(keys))
