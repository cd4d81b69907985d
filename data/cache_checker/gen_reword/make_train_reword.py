#!/usr/bin/env python3
"""Build data/cache_checker/train_reword.jsonl from hand-written intents.

Stdlib only, deterministic (fixed seed).  Reads gen_reword/intents/*.txt.

Intent file format (one item per line, blank lines and lines starting with
"//" are ignored):

    @<domain> <filler-category>        filler-category: service|general|personal|dev
    == <group_id> <sibling_tag>        sibling_tag: ask|attribute|step|related
    # <intent_id> [@<sibling_tag>]     optional per-intent tag override
    <phrasing>                         plain question
    !<phrasing>                        imperative / request form
    ~<phrasing>                        formal or long-winded register
    ^<phrasing>                        terse casual / texting register
    %<phrasing>                        same question with the clause order of
                                       the PREVIOUS line swapped

All phrasings of one intent ask for the same answer.  Intents inside one
group share the object/topic but ask for a different answer (hard
negatives).

Usage:  python3 data/cache_checker/gen_reword/make_train_reword.py
"""
import collections
import glob
import itertools
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.normpath(os.path.join(HERE, "..", "train_reword.jsonl"))
SEED = 914273
OTHER_SIM = 0.10  # content-word Jaccard below this = low-overlap negative

MARKERS = {"!": "imp", "~": "formal", "^": "casual", "%": "clause"}


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------
def parse_intents():
    groups = []
    domain = cat = None
    group = intent = None
    files = sorted(glob.glob(os.path.join(HERE, "intents", "*.txt")))
    if not files:
        sys.exit("no intent files found")
    for path in files:
        with open(path, encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.strip()
                where = "%s:%d" % (os.path.basename(path), lineno)
                if not line or line.startswith("//"):
                    continue
                if line.startswith("@"):
                    parts = line[1:].split()
                    domain, cat = parts[0], parts[1]
                    group = intent = None
                    continue
                if line.startswith("=="):
                    parts = line[2:].split()
                    group = {"id": domain + "." + parts[0],
                             "tag": parts[1] if len(parts) > 1 else "ask",
                             "domain": domain, "cat": cat, "intents": []}
                    groups.append(group)
                    intent = None
                    continue
                if line.startswith("#"):
                    parts = line[1:].split()
                    tag = None
                    if len(parts) > 1 and parts[1].startswith("@"):
                        tag = parts[1][1:]
                    intent = {"id": group["id"] + "." + parts[0], "tag": tag,
                              "phr": [], "where": where}
                    group["intents"].append(intent)
                    continue
                if intent is None:
                    sys.exit("phrasing outside an intent at " + where)
                marker = "plain"
                if line[0] in MARKERS:
                    marker = MARKERS[line[0]]
                    line = line[1:].strip()
                if marker == "clause" and not intent["phr"]:
                    sys.exit("clause variant without a previous line at " + where)
                intent["phr"].append((line, marker))
    return groups


def norm(s):
    s = s.lower().replace("\u2019", "'")
    s = re.sub(r"[^a-z0-9 ]+", "", s)
    return re.sub(r"\s+", " ", s).strip()


def validate(groups):
    seen_ids, seen_phr = set(), {}
    errors = []
    for g in groups:
        if g["tag"] not in ("ask", "attribute", "step", "related"):
            errors.append("bad group tag %s" % g["id"])
        if len(g["intents"]) < 2:
            errors.append("group with <2 intents: %s" % g["id"])
        for it in g["intents"]:
            if it["id"] in seen_ids:
                errors.append("duplicate intent id %s" % it["id"])
            seen_ids.add(it["id"])
            if len(it["phr"]) < 4:
                errors.append("intent with <4 phrasings: %s (%s)" % (it["id"], it["where"]))
            for text, _ in it["phr"]:
                k = norm(text)
                if k in seen_phr:
                    errors.append("phrasing reused: %r in %s and %s" % (text, seen_phr[k], it["id"]))
                seen_phr[k] = it["id"]
    if errors:
        sys.exit("\n".join(errors))


# --------------------------------------------------------------------------
# surface transforms (meaning preserving)
# --------------------------------------------------------------------------
PREFIXES = [  # stand on their own; the question follows
    "hi,", "hi there,", "hello,", "hey,", "hey there!", "good morning,",
    "good evening.", "quick question:", "question -", "ok so", "so,", "um,",
    "random question:", "can someone help?", "help please!", "hoping you can help.",
    "I hope this is the right place to ask.", "apologies for the basic question -",
    "hello, I have a question.", "hi, hope you're well.", "excuse me,",
    "hey, quick one:", "morning!", "hiya,", "hi all,", "hello again,",
]
SERVICE_PREFIXES = ["dear support team,", "hello customer service,", "hi support,"]
LEAD_PREFIXES = [  # only in front of a question that starts with a question word
    "sorry to bother you, but", "sorry to bother you, I was wondering",
    "sorry if this is a silly question, but", "I was wondering,",
    "not sure if this is the right place to ask, but", "I was just wondering:",
    "could you tell me", "do you know",
]
QWORDS = set("how what what's whats when where which who why is are do does did can "
             "could will would should am has have".split())
SUFFIXES = [
    "thanks", "thanks!", "thanks in advance", "thank you!", "thank you so much",
    "thx", "ty", "cheers", "much appreciated", "any help is appreciated",
    "appreciate any help", "please", "pls", "please help", "thanks a lot!",
    "I'd really appreciate an answer.", "thanks for your time.", ":)",
    "many thanks.", "thank you kindly.", "cheers in advance!", "tia",
]
CONTEXT = {
    "service": [
        "I've been a customer for years.", "I've been with you for quite a while now.",
        "long-time customer here.", "I've already looked through the FAQ.",
        "I couldn't find this on the website.", "I tried searching but got nowhere.",
        "a friend suggested I ask here.", "I'm not very good with this stuff.",
        "I've never had to deal with this before.", "I've been meaning to ask for a while.",
        "your chat bot couldn't answer it.", "I've been going round in circles on the help pages.",
    ],
    "general": [
        "just curious.", "this came up at dinner last night.",
        "my kid asked me and I had no idea.", "I've always wondered about this.",
        "we were arguing about this at work.", "I used to know this but forgot.",
        "settling a bet here.", "I saw something about it on TV and got curious.",
        "I'm revising and blanked on this.", "my friend and I can't agree on this.",
        "it's been bugging me all day.",
    ],
    "personal": [
        "first time trying this.", "I'm a complete beginner.",
        "I've watched a few videos but I'm still confused.",
        "my neighbour says one thing and the internet says another.",
        "I've been putting this off for weeks.", "I really want to get this right.",
        "my partner and I were debating this.", "I'm not very handy.",
        "I keep forgetting this.", "I've done it before but it's been years.",
    ],
    "dev": [
        "I'm new to coding.", "been stuck on this for an hour.", "probably a dumb question.",
        "googled it but the answers were confusing.", "I keep forgetting the syntax.",
        "coming from another language.", "my coworker asked and I blanked.",
        "I'm doing a course and this came up.",
    ],
}

# (expanded, contracted); contraction only applied when followed by a word
CONTRACTIONS = [
    ("do not", "don't"), ("does not", "doesn't"), ("did not", "didn't"),
    ("is not", "isn't"), ("are not", "aren't"), ("cannot", "can't"),
    ("will not", "won't"), ("what is", "what's"), ("it is", "it's"),
    ("I am", "I'm"), ("there is", "there's"), ("that is", "that's"),
    ("where is", "where's"), ("who is", "who's"), ("should not", "shouldn't"),
    ("would not", "wouldn't"), ("have not", "haven't"), ("has not", "hasn't"),
    ("was not", "wasn't"), ("I will", "I'll"), ("how is", "how's"),
]
EXPAND_ONLY = [("I have", "I've"), ("we have", "we've"), ("you are", "you're"),
               ("they are", "they're"), ("I would like", "I'd like")]

MISSPELL = {
    "receive": "recieve", "definitely": "definately", "separate": "seperate",
    "account": "acount", "password": "pasword", "subscription": "subscripton",
    "cancel": "cancle", "because": "becuase", "the": "teh", "which": "wich",
    "whether": "wether", "necessary": "neccessary", "address": "adress",
    "business": "buisness", "tomorrow": "tommorow", "until": "untill",
    "payment": "payement", "weird": "wierd", "really": "realy", "their": "thier",
    "calendar": "calender", "restaurant": "restaraunt", "schedule": "schedual",
    "beginning": "begining", "different": "diffrent", "available": "availible",
    "guarantee": "guarentee", "occasionally": "occasionaly", "immediately": "immediatly",
    "appointment": "appointmnet", "insurance": "insurence", "government": "goverment",
    "accommodation": "accomodation", "environment": "enviroment", "refund": "refnd",
    "experience": "experiance", "license": "lisence", "maintenance": "maintainance",
    "height": "heigth", "length": "lenght", "temperature": "temprature",
    "vacuum": "vaccum", "mortgage": "morgage", "privilege": "priviledge",
    "february": "febuary", "minute": "minuet", "probably": "probly",
    "interest": "intrest", "delivery": "delivary", "process": "proccess",
    "transfer": "tranfer", "question": "qeustion", "before": "befor",
    "between": "bewteen", "should": "shoud", "would": "woudl", "about": "abotu",
    "change": "chnage", "there": "tehre", "without": "wihtout", "replacement": "replacment",
}
TEXTING = {
    "you": "u", "your": "ur", "are": "r", "please": "pls", "thanks": "thx",
    "because": "bc", "people": "ppl", "okay": "ok", "really": "rly",
    "probably": "prob", "tomorrow": "tmrw", "something": "smth", "though": "tho",
    "before": "b4", "why": "y", "what": "wat",
}
PROTECT = {"not", "never", "without", "cannot", "than", "then", "more", "less",
           "most", "least", "before", "after", "first", "last", "minimum", "maximum",
           "free", "same", "each", "every", "only", "much", "many", "long"}
KEYB = {
    "a": "sqz", "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh",
    "h": "gj", "i": "uo", "j": "hk", "k": "jl", "l": "k", "m": "n", "n": "bm",
    "o": "ip", "p": "o", "q": "w", "r": "et", "s": "ad", "t": "ry", "u": "yi",
    "v": "cb", "w": "qe", "x": "zc", "y": "tu", "z": "x",
}

WORD_RE = re.compile(r"^([^A-Za-z0-9']*)([A-Za-z0-9'\-/]+)([^A-Za-z0-9']*)$")


def _case_like(src, dst):
    if src[:1].isupper():
        return dst[:1].upper() + dst[1:]
    return dst


def toggle_contractions(text, rng):
    out = text
    if rng.random() < 0.5:  # expand
        for full, short in CONTRACTIONS + EXPAND_ONLY:
            guard = r"(?!\s+(?:been|got|gotten|had)\b)" if short.endswith("'s") else ""
            pat = re.compile(r"\b" + re.escape(short) + r"\b" + guard, re.IGNORECASE)
            out = pat.sub(lambda m, f=full: _case_like(m.group(0), f), out)
        return out
    for full, short in CONTRACTIONS:
        guard = r"(?!\s+(?:it|he|she|this|that|they|there)\b)" if full.endswith(" is") else ""
        pat = re.compile(r"\b" + re.escape(full) + r"\b(?=\s+[A-Za-z])" + guard, re.IGNORECASE)
        out = pat.sub(lambda m, s_=short: _case_like(m.group(0), s_), out)
    return out


def typo_word(w, rng):
    lw = w.lower()
    if lw in MISSPELL and rng.random() < 0.7:
        return _case_like(w, MISSPELL[lw])
    n = len(w)
    op = rng.choice(["swap", "drop", "double", "key"])
    i = rng.randrange(1, n - 1)
    if op == "swap":
        return w[:i] + w[i + 1] + w[i] + w[i + 2:]
    if op == "drop":
        return w[:i] + w[i + 1:]
    if op == "double":
        return w[:i] + w[i] + w[i:]
    c = w[i].lower()
    if c in KEYB:
        return w[:i] + rng.choice(KEYB[c]) + w[i + 1:]
    return w[:i] + w[i + 1:]


def add_typos(text, rng, k):
    toks = text.split(" ")
    cand = []
    for idx, t in enumerate(toks):
        m = WORD_RE.match(t)
        if not m:
            continue
        core = m.group(2)
        if re.fullmatch(r"[a-z]{4,}", core) and core not in PROTECT:
            cand.append(idx)
        elif core.lower() in MISSPELL and core.lower() not in PROTECT and core.islower():
            cand.append(idx)
    if not cand:
        return text, False
    for idx in rng.sample(cand, min(k, len(cand))):
        m = WORD_RE.match(toks[idx])
        toks[idx] = m.group(1) + typo_word(m.group(2), rng) + m.group(3)
    return " ".join(toks), True


def texting(text, rng):
    toks = text.split(" ")
    changed = False
    for idx, t in enumerate(toks):
        m = WORD_RE.match(t)
        if not m:
            continue
        core = m.group(2)
        if core.lower() in TEXTING and rng.random() < 0.8:
            toks[idx] = m.group(1) + TEXTING[core.lower()] + m.group(3)
            changed = True
    return " ".join(toks), changed


def lower_first(q):
    first = q.split(" ", 1)[0]
    if first in ("I", "I'm", "I've", "I'd", "I'll") or not first[:1].isupper():
        return q
    if first[1:] != first[1:].lower():  # product names like StreamNest, SQL
        return q
    return q[:1].lower() + q[1:]


def upper_first(q):
    return q[:1].upper() + q[1:]


def add_filler(text, rng, cat, force=False):
    """Return (text, applied) with politeness / context that adds no constraint."""
    applied = False
    q = text
    roll_pre = rng.random() < (0.75 if force else 0.22)
    roll_ctx = rng.random() < (0.55 if force else 0.10)
    roll_suf = rng.random() < (0.55 if force else 0.18)
    if force and not (roll_pre or roll_ctx or roll_suf):
        roll_pre = True
    ctx_front = False
    if roll_ctx:
        ctx = rng.choice(CONTEXT[cat] + CONTEXT[cat][:3])
        ctx_front = rng.random() < 0.6
        if ctx_front:
            q = upper_first(ctx) + " " + upper_first(q)
        else:
            is_q = text.split(" ", 1)[0].lower().strip(",") in QWORDS
            q = q + (" " if q[-1:] in "?.!" else ("? " if is_q else ". ")) + upper_first(ctx)
        applied = True
    if roll_pre:
        first = text.split(" ", 1)[0].lower().strip(",")
        if not ctx_front and first in QWORDS and rng.random() < 0.3:
            p = rng.choice(LEAD_PREFIXES)
            if p in ("could you tell me", "do you know"):
                p = p + ","
        else:
            pool = PREFIXES + (SERVICE_PREFIXES if cat == "service" else [])
            p = rng.choice(pool)
        if p[-1] in ",:-" or p == "ok so" or p in LEAD_PREFIXES:
            q = p + " " + lower_first(q)
        else:
            q = p + " " + upper_first(q)
        q = upper_first(q) if rng.random() < 0.6 else q
        applied = True
    if roll_suf:
        s = rng.choice(SUFFIXES)
        if q[-1:] in "?.!":
            q = q + " " + s
        else:
            q = q + (", " if rng.random() < 0.5 else " ") + s
        applied = True
    return q, applied


def surface(text, rng, cat, mode="light"):
    """Apply independent random meaning-preserving surface noise.

    mode: light | typo (forced heavy typos) | filler (forced filler)
    Returns (text, set_of_applied_transforms).
    """
    applied = set()
    q = text
    if rng.random() < 0.25:
        q2 = toggle_contractions(q, rng)
        if q2 != q:
            applied.add("contraction")
            q = q2
    if mode == "filler":
        q, ok = add_filler(q, rng, cat, force=True)
    else:
        q, ok = add_filler(q, rng, cat)
    if ok:
        applied.add("filler")
    if mode == "typo":
        q, ok = add_typos(q, rng, rng.choice([1, 2, 2, 3]))
        if ok:
            applied.add("typo")
        if rng.random() < 0.45:
            q, ok = texting(q, rng)
            if ok:
                applied.add("typo")
    else:
        if rng.random() < 0.13:
            q, ok = add_typos(q, rng, 1)
            if ok:
                applied.add("typo")
        if rng.random() < 0.04:
            q, ok = texting(q, rng)
            if ok:
                applied.add("typo")
    # punctuation
    r = rng.random()
    if r < (0.55 if mode == "typo" else 0.22):
        q = re.sub(r"[?.!]+$", "", q.rstrip())
        if rng.random() < 0.5:
            q = q.replace(",", "")
        if rng.random() < 0.4:
            q = q.replace("'", "")
        applied.add("punct")
    elif r < 0.30:
        q = re.sub(r"\?$", "??", q) if rng.random() < 0.5 else q
    # casing
    r = rng.random()
    if r < (0.55 if mode == "typo" else 0.30):
        q = q.lower()
        applied.add("case")
    elif r < 0.32:
        q = q.upper()
        applied.add("case")
    elif r < 0.70:
        q = upper_first(q)
    return q, applied


# --------------------------------------------------------------------------
# pair construction
# --------------------------------------------------------------------------
STOP = set("""a an the to of for on in at by with and or is are was be been do does did i my me
we our you your it its this that what whats how hows can could would should will
there any if from as so just please about get have has had im ive id ill much many""".split())


def content_tokens(s):
    return {t for t in norm(s).split() if t not in STOP}


def jaccard(a, b):
    A, B = content_tokens(a), content_tokens(b)
    if not A or not B:
        return 0.0
    return len(A & B) / len(A | B)


def positive_kind(pa, pb, adjacent_clause, applied):
    ma, mb = pa[1], pb[1]
    if adjacent_clause:
        return "reword_clause_order"
    if (ma == "imp") != (mb == "imp"):
        return "reword_imperative"
    if (ma == "formal") != (mb == "formal"):
        return "reword_register"
    if (ma == "casual") != (mb == "casual"):
        return "reword_terse"
    return "reword_vocab"


def pair_tag(g, A, B):
    tags = {A["tag"] or g["tag"], B["tag"] or g["tag"]}
    if g["tag"] == "step":  # siblings are stages of one process
        if "related" in tags:
            return "related"
        if tags == {"attribute"}:
            return "attribute"
        return "step"
    if len(tags) == 1:
        return tags.pop()
    for t in ("related", "attribute"):
        if t in tags:
            return t
    return g["tag"]


def build(groups, rng):
    rows = []
    for g in groups:
        cat = g["cat"]
        gpos = []
        for it in g["intents"]:
            ph = it["phr"]
            n = len(ph)
            # 1) every pair of distinct phrasings, independent light noise
            for i, j in itertools.combinations(range(n), 2):
                a, fa = surface(ph[i][0], rng, cat)
                b, fb = surface(ph[j][0], rng, cat)
                adj = (j == i + 1 and ph[j][1] == "clause")
                kind = positive_kind(ph[i], ph[j], adj, fa | fb)
                gpos.append((a, b, 1, kind))
                if adj:  # clause-order pairs are rare: two more noisy copies
                    for _ in range(2):
                        a2, _f = surface(ph[i][0], rng, cat)
                        b2, _f = surface(ph[j][0], rng, cat)
                        gpos.append((a2, b2, 1, kind))
            # 2) heavy typo / texting: same phrasing and cross phrasing
            i = rng.randrange(n)
            a, _ = surface(ph[i][0], rng, cat, "light")
            b, fb = surface(ph[i][0], rng, cat, "typo")
            gpos.append((a, b, 1, "reword_typo"))
            i, j = rng.sample(range(n), 2)
            a, _ = surface(ph[i][0], rng, cat, "light")
            b, _ = surface(ph[j][0], rng, cat, "typo")
            gpos.append((a, b, 1, "reword_typo"))
            # 3) forced filler/context: same phrasing and cross phrasing
            i = rng.randrange(n)
            a = ph[i][0] if rng.random() < 0.5 else surface(ph[i][0], rng, cat, "light")[0]
            b, _ = surface(ph[i][0], rng, cat, "filler")
            gpos.append((a, b, 1, "reword_filler"))
            i, j = rng.sample(range(n), 2)
            a, _ = surface(ph[i][0], rng, cat, "light")
            b, _ = surface(ph[j][0], rng, cat, "filler")
            gpos.append((a, b, 1, "reword_filler"))
        rows.extend(gpos)

        # negatives: sibling intents in the same group, matched to positives
        target = len(gpos)
        ints = g["intents"]
        ipairs = list(itertools.combinations(range(len(ints)), 2))
        quota = -(-target // len(ipairs))
        gneg = []
        for x, y in ipairs:
            A, B = ints[x], ints[y]
            cands = [(jaccard(p[0], q[0]), p, q) for p in A["phr"] for q in B["phr"]]
            rng.shuffle(cands)
            by_sim = sorted(cands, key=lambda c: -c[0])
            half = (quota * 3) // 5
            chosen = by_sim[:half]
            rest = by_sim[half:]
            rng.shuffle(rest)
            chosen += rest[: quota - half]
            tag = pair_tag(g, A, B)
            for sim, p, q in chosen:
                a, _ = surface(p[0], rng, cat)
                b, _ = surface(q[0], rng, cat)
                heavy = p[1] != "plain" or q[1] != "plain"
                if sim < OTHER_SIM and heavy:
                    kind = "reworded_other_intent"
                else:
                    kind = "sibling_" + tag
                gneg.append((a, b, 0, kind))
        rng.shuffle(gneg)
        rows.extend(gneg[: max(target, 1)])
    return rows


def finalize(rows, rng):
    labels = collections.defaultdict(set)
    first = {}
    for a, b, label, kind in rows:
        na, nb = norm(a), norm(b)
        if not na or not nb or na == nb:
            continue
        key = tuple(sorted((na, nb)))
        labels[key].add(label)
        if key not in first:
            first[key] = (a, b, label, kind)
    out = []
    for key, (a, b, label, kind) in first.items():
        if len(labels[key]) > 1:
            continue  # never both labels
        if rng.random() < 0.5:
            a, b = b, a
        out.append({"a": a, "b": b, "label": label, "kind": kind})
    out.sort(key=lambda r: (norm(r["a"]), norm(r["b"])))
    rng.shuffle(out)
    return out


def main():
    groups = parse_intents()
    validate(groups)
    rng = random.Random(SEED)
    rows = build(groups, rng)
    out = finalize(rows, rng)
    with open(OUT_PATH, "w", encoding="utf-8") as fh:
        for r in out:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    n_int = sum(len(g["intents"]) for g in groups)
    n_phr = sum(len(it["phr"]) for g in groups for it in g["intents"])
    doms = collections.Counter(g["domain"] for g in groups for _ in g["intents"])
    print("wrote %s" % OUT_PATH)
    print("groups: %d  intents: %d  phrasings: %d  domains: %d" % (len(groups), n_int, n_phr, len(doms)))
    print("intents per domain: " + ", ".join("%s=%d" % kv for kv in sorted(doms.items())))
    lab = collections.Counter(r["label"] for r in out)
    print("pairs: %d  label1: %d  label0: %d" % (len(out), lab[1], lab[0]))
    kinds = collections.Counter((r["kind"], r["label"]) for r in out)
    for (k, l), c in sorted(kinds.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        print("  %-24s label=%d  %d" % (k, l, c))


if __name__ == "__main__":
    main()
