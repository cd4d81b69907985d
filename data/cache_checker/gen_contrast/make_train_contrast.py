#!/usr/bin/env python3
"""Build data/cache_checker/train_contrast.jsonl: minimal-edit contrast pairs.

Each line: {"a": ..., "b": ..., "label": 1|0, "kind": ...}
  label 1 = a cached answer to one question may be served for the other.
  label 0 = the edit changes the answer.

Every label-0 phenomenon (argument swap, negation, quantity change, scope
change, comparative flip, entity swap) is paired with near-identical label-1
controls (symmetric relations, paraphrased direction, digit/word forms,
equivalent units, scope paraphrases, converses, aliases), so surface
similarity alone does not predict the label.

Stdlib only, deterministic (fixed seed). Run from anywhere:
    python3 data/cache_checker/gen_contrast/make_train_contrast.py
"""
import json
import os
import random
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import lex_common as C  # noqa: E402
from lex_common import fill, sub, clean, norm, pair_key, style, num_forms  # noqa: E402
import lex_direction as D  # noqa: E402
import lex_negation as N  # noqa: E402
import lex_quantity as Q  # noqa: E402
import lex_scope as S  # noqa: E402
import lex_comparative as CP  # noqa: E402
import lex_entity as E  # noqa: E402

SEED = 1729
OUT = os.path.normpath(os.path.join(HERE, "..", "train_contrast.jsonl"))

C.P.update(D.PAIRED_SLOTS)

TARGETS = [
    ("direction_swap", 0, 2300), ("direction_control", 1, 2300),
    ("negation", 0, 2700), ("negation_control", 1, 2700),
    ("quantity_change", 0, 2500), ("quantity_control", 1, 2500),
    ("scope_change", 0, 1900), ("scope_control", 1, 1900),
    ("comparative_flip", 0, 1000), ("comparative_swap", 0, 700),
    ("comparative_converse", 1, 850), ("comparative_control", 1, 850),
    ("entity_swap", 0, 1250), ("entity_control", 1, 1250),
]


# ----------------------------------------------------------------- helpers
def pick_two(g, rng):
    if "pairs" in g:
        a, b = rng.choice(g["pairs"])
        return (a, b) if rng.random() < 0.5 else (b, a)
    if "choose_group" in g:
        grp = rng.choice(g["choose_group"])
        return tuple(rng.sample(grp, 2))
    if "choose" in g:
        pool = C.P[g["choose"]] if isinstance(g["choose"], str) else g["choose"]
        return tuple(rng.sample(pool, 2))
    if "nums" in g:
        lo, hi = g["nums"]
        a = rng.randint(lo, hi)
        b = rng.randint(lo, hi)
        while b == a:
            b = rng.randint(lo, hi)
        return str(a), str(b)
    if "ents" in g:
        pool = C.P[g["ents"]] if isinstance(g["ents"], str) else g["ents"]
        return tuple(rng.sample(pool, 2))
    raise KeyError(g)


def R(t, rng, memo, **kw):
    return fill(sub(t, **kw), rng, memo)


def two_frames(frames, rng, p_same):
    f1 = rng.choice(frames)
    f2 = f1 if rng.random() < p_same else rng.choice(frames)
    return f1, f2


# ----------------------------------------------------------------- direction
def gen_direction(rng, want):
    memo = {}
    if want == "direction_swap":
        g = rng.choice(D.ASYM)
        a, b = pick_two(g, rng)
        f1, f2 = two_frames(g["frames"], rng, 0.35)
        return R(f1, rng, memo, a=a, b=b), R(f2, rng, memo, a=b, b=a)
    if rng.random() < 0.6:
        g = rng.choice(D.SYM)
        a, b = pick_two(g, rng)
        f1, f2 = two_frames(g["frames"], rng, 0.7)
        return R(f1, rng, memo, a=a, b=b), R(f2, rng, memo, a=b, b=a)
    g = rng.choice(D.ASYM)
    a, b = pick_two(g, rng)
    if g.get("fixed"):
        a, b = rng.choice(g["pairs"])
    f1, f2 = rng.sample(g["frames"], 2)
    return R(f1, rng, memo, a=a, b=b), R(f2, rng, memo, a=a, b=b)


# ----------------------------------------------------------------- negation
VERB_POOL = N.VERB_ITEMS + [N.POWER_ITEM] * 3


def gen_negation(rng, want):
    memo = {}
    if rng.random() < 0.5:
        it = rng.choice(VERB_POOL)
        cls = rng.choice(it.get("classes", N.DEFAULT_CLASSES))
        obj = rng.choice(it["objs"])
        prep = it.get("prep")

        def mk(frame, verb, pol):
            o = obj.replace("{p}", prep[0 if pol == "pos" else 1]) if prep else obj
            return R(frame, rng, memo, v=verb, o=o)

        if want == "negation":
            f1, f2 = two_frames(cls, rng, 0.45)
            pa, pb = rng.choice(it["pos"]), rng.choice(it["neg"])
            return mk(f1, pa, "pos"), mk(f2, pb, "neg")
        pol = rng.choice(["pos", "neg"])
        vs = it[pol]
        if len(vs) >= 2 and rng.random() < 0.6:
            v1, v2 = rng.sample(vs, 2)
            f1, f2 = two_frames(cls, rng, 0.85)
        else:
            v1, v2 = rng.choice(vs), rng.choice(vs)
            f1, f2 = rng.sample(cls, 2)
        return mk(f1, v1, pol), mk(f2, v2, pol)
    it = rng.choice(N.MODAL_ITEMS)
    vals = {}
    if "x" in it:
        vals["x"] = rng.choice(it["x"])
    if "xy" in it:
        vals["x"], vals["y"] = rng.choice(it["xy"])
    cl = it["classes"]
    if want == "negation":
        i, j = rng.sample(range(len(cl)), 2)
        if rng.random() < 0.4:
            k = rng.randrange(min(len(cl[i]), len(cl[j])))
            t1, t2 = cl[i][k], cl[j][k]
        else:
            t1, t2 = rng.choice(cl[i]), rng.choice(cl[j])
    else:
        i = rng.randrange(len(cl))
        t1, t2 = rng.sample(cl[i], 2)
    return R(t1, rng, memo, **vals), R(t2, rng, memo, **vals)


# ----------------------------------------------------------------- quantity
def _num_form(n, rng):
    f = [x for x in num_forms(n) if "dozen" not in x and not x.endswith("k")]
    return f[0] if rng.random() < 0.7 else rng.choice(f)


def gen_quantity(rng, want):
    memo = {}
    if rng.random() < 0.1:
        t = fill(rng.choice(Q.DIMS), rng, memo)
        x, y = rng.sample(range(6, 25), 2)
        if want == "quantity_change":
            y2 = y + rng.choice([-2, -1, 1, 2])
            if y2 == x or y2 < 2:
                return None
            if rng.random() < 0.5:
                return (sub(t, x=_num_form(x, rng), y=_num_form(y, rng)),
                        sub(t, x=_num_form(x, rng), y=_num_form(y2, rng)))
            return (sub(t, x=_num_form(x, rng), y=_num_form(y, rng)),
                    sub(t, x=_num_form(y2, rng), y=_num_form(x, rng)))
        return (sub(t, x=_num_form(x, rng), y=_num_form(y, rng)),
                sub(t, x=_num_form(y, rng), y=_num_form(x, rng)))
    t, qt, p = rng.choice(Q.FRAMES)
    draw, forms, change = Q.QTYPES[qt]
    base = fill(t, rng, memo)
    v = draw(p, rng)
    fa = forms(v, p)
    if want == "quantity_change":
        w = change(v, p, rng)
        if w is None or w == v:
            return None
        fb = forms(w, p)
        if qt == "oven" and v[1] != w[1]:
            explicit = ("F", "C", "Fahrenheit", "Celsius")
            fa = [x for x in fa if x.endswith(explicit)]
            fb = [x for x in fb if x.endswith(explicit)]
        if rng.random() < 0.55:
            k = rng.randrange(min(len(fa), len(fb)))
            sa, sb = fa[k], fb[k]
        else:
            sa, sb = rng.choice(fa), rng.choice(fb)
        return sub(base, q=sa), sub(base, q=sb)
    if len(fa) < 2:
        return None
    sa, sb = rng.sample(fa, 2)
    return sub(base, q=sa), sub(base, q=sb)


# ----------------------------------------------------------------- scope
def gen_scope(rng, want):
    memo = {}
    it = rng.choice(S.ITEMS)
    grp = rng.choice(it["frames"])
    vals = {"x": rng.choice(it["x"])} if "x" in it else {}
    cls = it["classes"]
    names = list(cls)
    if want == "scope_change":
        c1, c2 = rng.sample(names, 2)
        s1, s2 = rng.choice(cls[c1]), rng.choice(cls[c2])
        f1, f2 = two_frames(grp, rng, 0.75)
    else:
        vs = cls[rng.choice(names)]
        if len(vs) >= 2 and (rng.random() < 0.7 or len(grp) < 2):
            s1, s2 = rng.sample(vs, 2)
            f1, f2 = two_frames(grp, rng, 0.75)
        else:
            if len(grp) < 2:
                return None
            s1 = s2 = rng.choice(vs)
            f1, f2 = rng.sample(grp, 2)
    return R(sub(f1, s=s1), rng, memo, **vals), R(sub(f2, s=s2), rng, memo, **vals)


# ----------------------------------------------------------------- comparatives
def _rel_pick(it, rng):
    if "pairs_u" in it:
        a, b, u = rng.choice(it["pairs_u"])
        return a, b, {"u": u}
    a, b = pick_two(it, rng)
    return a, b, {}


def gen_comparative(rng, want):
    memo = {}
    r = rng.random()
    if want in ("comparative_swap", "comparative_converse") or \
            (want == "comparative_flip" and r < 0.35) or (want == "comparative_control" and r < 0.3):
        if rng.random() < 0.75:
            it = rng.choice(CP.REL)
            P_, Cv = it["pos"], it["conv"]
        else:
            it = rng.choice(CP.HOWMUCH)
            P_, Cv = it["more"], it["less"]
        a, b, ex = _rel_pick(it, rng)
        if want == "comparative_swap":
            L = P_ if rng.random() < 0.7 else Cv
            f1, f2 = two_frames(L, rng, 0.35)
            return R(f1, rng, memo, a=a, b=b, **ex), R(f2, rng, memo, a=b, b=a, **ex)
        if want == "comparative_converse":
            f1, f2 = rng.choice(P_), rng.choice(Cv)
            return R(f1, rng, memo, a=a, b=b, **ex), R(f2, rng, memo, a=b, b=a, **ex)
        if want == "comparative_flip":
            f1, f2 = rng.choice(P_), rng.choice(Cv)
            return R(f1, rng, memo, a=a, b=b, **ex), R(f2, rng, memo, a=a, b=b, **ex)
        L = P_ if len(P_) >= 2 and (len(Cv) < 2 or rng.random() < 0.6) else Cv
        if len(L) < 2:
            return None
        f1, f2 = rng.sample(L, 2)
        return R(f1, rng, memo, a=a, b=b, **ex), R(f2, rng, memo, a=a, b=b, **ex)
    r = rng.random()
    if r < 0.4:
        it = rng.choice(CP.CHOICE)
        a, b, c = rng.choice(it["pairs"])
        f1, f2 = two_frames(CP.CHOICE_FRAMES, rng, 0.45 if want == "comparative_flip" else 0.85)
        if want == "comparative_flip":
            adj1, adj2 = rng.choice(it["pos"]), rng.choice(it["neg"])
            if rng.random() < 0.5:
                adj1, adj2 = adj2, adj1
            order2 = (a, b) if rng.random() < 0.7 else (b, a)
        else:
            L = it["pos"] if rng.random() < 0.6 else it["neg"]
            adj1, adj2 = rng.choice(L), rng.choice(L)
            order2 = (b, a) if rng.random() < 0.65 else (a, b)
        return (R(f1, rng, memo, a=a, b=b, c=c, adj=adj1),
                R(f2, rng, memo, a=order2[0], b=order2[1], c=c, adj=adj2))
    if r < 0.72:
        t, pos, neg = rng.choice(CP.SUPER)
        key = "sup"
    else:
        t, pos, neg = rng.choice(CP.THRESH)
        key = "cmp"
    t = fill(t, rng, memo)
    if want == "comparative_flip":
        w1, w2 = rng.choice(pos), rng.choice(neg)
        if rng.random() < 0.5:
            w1, w2 = w2, w1
    else:
        L = pos if rng.random() < 0.6 else neg
        if len(L) < 2:
            L = pos if len(pos) >= 2 else neg
        if len(L) < 2:
            return None
        w1, w2 = rng.sample(L, 2)
    return sub(t, **{key: w1}), sub(t, **{key: w2})


# ----------------------------------------------------------------- entities
def gen_entity(rng, want):
    memo = {}
    T = rng.choice(E.TYPES)
    grp = rng.choice(T["frames"])
    if want == "entity_swap":
        e1, e2 = rng.sample(T["ents"], 2)
        n1, n2 = rng.choice(e1), rng.choice(e2)
        f1, f2 = two_frames(grp, rng, 0.5)
    else:
        e = rng.choice(T["ents"])
        multi = [x for x in T["ents"] if len(x) >= 2]
        if multi and rng.random() < 0.5:
            e = rng.choice(multi)
        if len(e) >= 2 and (rng.random() < 0.75 or len(grp) < 2):
            n1, n2 = rng.sample(e, 2)
            f1, f2 = two_frames(grp, rng, 0.8)
        else:
            if len(grp) < 2:
                return None
            n1 = n2 = rng.choice(e)
            f1, f2 = rng.sample(grp, 2)
    return R(f1, rng, memo, e=n1), R(f2, rng, memo, e=n2)


GENS = {
    "direction": gen_direction, "negation": gen_negation, "quantity": gen_quantity,
    "scope": gen_scope, "comparative": gen_comparative, "entity": gen_entity,
}


def family(kind):
    return kind.split("_")[0]


# ----------------------------------------------------------------- main
def build():
    rng = random.Random(SEED)
    core_seen = {}
    rows = []
    short = []
    for kind, label, target in TARGETS:
        gen = GENS[family(kind)]
        want = kind
        n = tries = 0
        while n < target and tries < target * 60:
            tries += 1
            r = gen(rng, want)
            if not r:
                continue
            a, b = clean(r[0]), clean(r[1])
            if "{" in a or "{" in b or "}" in a or "}" in b:
                raise RuntimeError("unfilled slot: %r / %r" % (a, b))
            if norm(a) == norm(b):
                continue
            ck = pair_key(a, b)
            if ck in core_seen:
                if core_seen[ck][0] != label:
                    core_seen[ck] = (None, None)
                continue
            core_seen[ck] = (label, kind)
            rows.append({"core": ck, "a": a, "b": b, "label": label, "kind": kind})
            n += 1
        if n < target:
            short.append((kind, n, target))
    # drop any core pair that was produced with both labels
    bad = {k for k, v in core_seen.items() if v[0] is None}
    if "-v" in sys.argv:
        for k in sorted(bad):
            print("conflict:", k)
    rows = [r for r in rows if r["core"] not in bad]

    # independent surface styling of each side, then final de-duplication
    final_seen = {}
    styled = []
    for r in rows:
        for _ in range(5):
            sa, sb = style(r["a"], rng), style(r["b"], rng)
            if norm(sa) != norm(sb):
                break
        else:
            sa, sb = r["a"], r["b"]
        if norm(sa) == norm(sb):
            continue
        if rng.random() < 0.5:
            sa, sb = sb, sa
        fk = pair_key(sa, sb)
        if fk in final_seen:
            if final_seen[fk] != r["label"]:
                final_seen[fk] = None
            continue
        final_seen[fk] = r["label"]
        styled.append({"a": sa, "b": sb, "label": r["label"], "kind": r["kind"], "_k": fk})
    styled = [r for r in styled if final_seen[r["_k"]] is not None]
    rng.shuffle(styled)
    with open(OUT, "w", encoding="utf-8") as fh:
        for r in styled:
            fh.write(json.dumps({"a": r["a"], "b": r["b"], "label": r["label"], "kind": r["kind"]},
                                ensure_ascii=False) + "\n")
    return styled, short, len(bad)


def main():
    rows, short, nbad = build()
    kinds = Counter(r["kind"] for r in rows)
    labels = Counter(r["label"] for r in rows)
    print("wrote %d pairs to %s" % (len(rows), OUT))
    print("labels: 1=%d 0=%d" % (labels[1], labels[0]))
    print("%-22s %6s %5s" % ("kind", "count", "label"))
    lab = {k: l for k, l, _ in TARGETS}
    for k, _, _ in TARGETS:
        print("%-22s %6d %5d" % (k, kinds[k], lab[k]))
    if nbad:
        print("dropped %d core pairs generated with both labels" % nbad)
    for k, n, t in short:
        print("note: %s reached %d of %d (ran out of distinct pairs)" % (k, n, t))


if __name__ == "__main__":
    main()
