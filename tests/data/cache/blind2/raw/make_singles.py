#!/usr/bin/env python3
"""Build singles.jsonl for the blind2 semantic-cache calibration set.

All pair texts live in the sibling *.py data modules, written by hand.  The only
generated part is extra near_repeat pairs: a deterministic surface-noise pass
(casing, punctuation, filler words, one typo, "you"->"u") over stored questions
taken from the hand-written paraphrase pairs.

stdlib only.  Usage:  python3 make_singles.py
"""
import hashlib
import importlib.util
import json
import os
import random
import re
import sys
sys.dont_write_bytecode = True
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "singles.jsonl")

MODULES = [
    "para_1", "para_2", "para_3", "para_4",
    "reorder", "near_hand",
    "neg", "entity", "extra_false", "number", "scope", "direction", "rangetime", "opposite",
]
TRUE_CATS = {"paraphrase", "near_repeat", "reorder"}
FALSE_CATS = {"negation", "entity_swap", "number_change", "scope_change",
              "direction_swap", "range_or_time", "opposite_wording"}
SEP = " ~~ "


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse(mod):
    cat = mod.CATEGORY
    domain = None
    rows = []
    for n, raw in enumerate(mod.DATA.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            domain = line[1:].strip()
            continue
        if line.startswith("%"):
            cat = line[1:].strip()
            continue
        parts = line.split(SEP)
        if len(parts) != 2 or not domain:
            raise SystemExit("%s line %d malformed: %r" % (mod.__name__, n, raw))
        a, b = parts[0].strip(), parts[1].strip()
        rows.append({"a": a, "b": b, "same_answer": cat in TRUE_CATS,
                     "category": cat, "domain": domain})
    return rows


# ---------------------------------------------------------------- surface noise
PREFIXES = ["hi, ", "hey ", "hello - ", "quick question: ", "sorry, ", "ok so ",
            "hi there, ", "um ", "hey, quick one: ", "Hi! "]
SUFFIXES = [" thanks", " pls", " please", " thx", " ty", " thanks in advance",
            " cheers", " asap", " help", " thank you"]
COMMON = set("""dive form from fro trail trial cost coat bill ball sale sell fees feel dose does
mine mile lose lost loss later latter light right night sight their there three where were
wear bear hear heat head dead deal meal seal steal steel price prize pride ride rise rose
""".split())
VOCAB = set()
NO_TOUCH = {"not", "never", "dont", "don't", "doesn't", "isn't", "can't", "won't",
            "before", "after", "above", "below", "under", "over", "from", "into"}


def h(s):
    return int(hashlib.sha256(s.encode("utf-8")).hexdigest()[:12], 16)


def typo(word, rng):
    i = rng.randrange(1, len(word) - 2)
    kind = rng.choice(["swap", "drop", "double"])
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "drop":
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def add_typo(text, rng):
    toks = text.split(" ")
    idx = [k for k, t in enumerate(toks)
           if t.isalpha() and len(t) >= 5 and t.lower() not in NO_TOUCH]
    if not idx:
        return text
    for _ in range(12):
        k = rng.choice(idx)
        new = typo(toks[k], rng)
        # never let a typo produce a different real word (e.g. drive -> dive)
        if new.lower() != toks[k].lower() and new.lower() not in VOCAB | COMMON:
            toks[k] = new
            break
    return " ".join(toks)


def noisy(text):
    rng = random.Random(h(text))
    out = text
    pool = ["lower", "punct", "apos", "prefix", "suffix", "typo", "you", "typo2",
            "lower2", "suffix2"]
    if rng.random() < 0.12:
        pool.append("space")
    ops = rng.sample(pool, k=rng.choice([2, 2, 3, 3, 4]))
    for op in ops:
        if op in ("lower", "lower2"):
            out = out.lower()
        elif op == "punct":
            out = out.rstrip("?.! ") + rng.choice(["", "", "??", "?!", " ?", "..."])
        elif op == "apos":
            out = out.replace("'", "")
        elif op == "prefix":
            p = rng.choice(PREFIXES)
            out = p + (out[0].lower() + out[1:] if rng.random() < 0.6 else out)
        elif op in ("suffix", "suffix2"):
            if not out.endswith(tuple(SUFFIXES)):
                out = out.rstrip() + rng.choice(SUFFIXES)
        elif op in ("typo", "typo2"):
            out = add_typo(out, rng)
        elif op == "you":
            out = re.sub(r"\byou\b", "u", out)
            out = re.sub(r"\bplease\b", "pls", out)
        elif op == "space":
            out = out.replace(", ", ",", 1) if ", " in out else out.replace(" ", "  ", 1)
    return out


def make_auto_near(paraphrases, taken, n_target):
    cands = sorted({r["a"]: r for r in paraphrases}.values(), key=lambda r: h("nr|" + r["a"]))
    rows = []
    for r in cands:
        if len(rows) >= n_target:
            break
        if r["a"] in taken:
            continue
        b = noisy(r["a"])
        if b == r["a"]:
            continue
        rows.append({"a": r["a"], "b": b, "same_answer": True,
                     "category": "near_repeat", "domain": r["domain"]})
    return rows


# ---------------------------------------------------------------- checks
def norm(s):
    return re.sub(r"[^a-z0-9 ]+", "", s.lower()).split()


def main():
    rows = []
    for m in MODULES:
        rows.extend(parse(load(m)))
    for r in rows:
        VOCAB.update(w for w in re.findall(r"[a-z]+", (r["a"] + " " + r["b"]).lower()))
    para = [r for r in rows if r["category"] == "paraphrase"]
    hand_near_a = {r["a"] for r in rows if r["category"] == "near_repeat"}
    rows.extend(make_auto_near(para, hand_near_a, 190))

    seen, out, problems = set(), [], []
    for r in rows:
        key = (r["a"], r["b"])
        if key in seen or (r["b"], r["a"]) in seen:
            problems.append("duplicate: %r" % (key,))
            continue
        if r["a"] == r["b"]:
            problems.append("identical: %r" % r["a"])
            continue
        if not r["same_answer"] and norm(r["a"]) == norm(r["b"]):
            problems.append("false pair equal after normalising: %r" % r["a"])
            continue
        assert r["category"] in TRUE_CATS | FALSE_CATS, r
        seen.add(key)
        out.append(r)

    with open(OUT, "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps({k: r[k] for k in ("a", "b", "same_answer", "category", "domain")},
                               ensure_ascii=False) + "\n")

    # re-read and validate
    with open(OUT, encoding="utf-8") as f:
        back = [json.loads(l) for l in f]
    assert all(set(r) == {"a", "b", "same_answer", "category", "domain"} for r in back)

    cats = Counter(r["category"] for r in back)
    labels = Counter(r["same_answer"] for r in back)
    doms = Counter(r["domain"] for r in back)
    print("rows", len(back), "labels", dict(labels))
    for c, n in sorted(cats.items()):
        print("  %-17s %d" % (c, n))
    print("domains", len(doms))
    for d, n in sorted(doms.items()):
        print("  %-24s %d" % (d, n))
    # paraphrase word overlap (content-token Jaccard)
    stop = set("a an the i my me to of for on in at is it do does can how what i'm im "
               "and or with be are you your if".split())
    jac = []
    for r in back:
        if r["category"] != "paraphrase":
            continue
        x = set(norm(r["a"])) - stop
        y = set(norm(r["b"])) - stop
        jac.append(len(x & y) / max(1, len(x | y)))
    low = sum(1 for j in jac if j < 0.34)
    print("paraphrase content-Jaccard < 0.34: %d / %d" % (low, len(jac)))
    if problems:
        print("dropped %d:" % len(problems))
        for p in problems:
            print("   ", p)


if __name__ == "__main__":
    sys.exit(main())
