#!/usr/bin/env python3
"""Build conversations.jsonl (conversation-level semantic-cache pairs) and README.md.

Stdlib only. The scenario text is hand-written in data_p1..data_p4.py and
data_irrelevant.py; this script only assembles pairs from it, adds light
templated chatter / casing noise, validates and deduplicates.

Usage:  python3 make_conversations.py
"""
import collections
import copy
import hashlib
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import convlib  # noqa: E402
import data_p1, data_p2, data_p3, data_p4, data_irrelevant  # noqa: E402,F401

OUT = os.path.join(HERE, "conversations.jsonl")
README = os.path.join(HERE, "README.md")
SEED = 20261207
MAX_MSGS = 8

TARGETS = {
    "exact_repeat": 100,
    "reworded": 310,
    "extra_chatter": 310,
    "irrelevant_history": 310,
    "early_detail": 300,
    "late_detail": 300,
    "context_flip": 300,
    "intent_flip": 300,
}
TRUE_CATS = {"exact_repeat", "reworded", "extra_chatter", "irrelevant_history"}

ROLE = {"U": "user", "A": "assistant", "S": "system"}


# ------------------------------------------------------------------ parsing
def parse(text):
    msgs = []
    for raw in text.strip().split("\n"):
        line = raw.strip()
        if not line:
            continue
        m = re.match(r"^([UAS]): (.*)$", line)
        if m:
            msgs.append({"role": ROLE[m.group(1)], "content": m.group(2).strip()})
        else:
            if not msgs:
                raise ValueError("continuation without message: %r" % text)
            msgs[-1]["content"] += " " + line
    return msgs


def msg(role, content):
    return {"role": role, "content": content}


# ------------------------------------------------------------------ substitutions
def _pat(old):
    p = re.escape(old)
    if old[0].isalnum():
        p = r"(?<![A-Za-z0-9])" + p
    if old[0].isdigit():
        p = r"(?<!\d[.,])" + p
    if old[-1].isalnum():
        p = p + r"(?![A-Za-z0-9])"
    if old[-1].isdigit():
        p = p + r"(?![.,]\d)"
    return p


def found(old, conv):
    rx = re.compile(_pat(old))
    return any(rx.search(m["content"]) for m in conv)


def apply_subs(conv, subs):
    subs = sorted(subs, key=lambda s: -len(s[0]))
    rx = re.compile("|".join("(%s)" % _pat(o) for o, _ in subs))
    out = []
    for m in conv:
        c = rx.sub(lambda mo: subs[mo.lastindex - 1][1], m["content"])
        out.append(msg(m["role"], c))
    return out


def changed(a, b):
    return [i for i, (x, y) in enumerate(zip(a, b)) if x["content"] != y["content"]]


def ok_early(base, var):
    ch = changed(base, var)
    n = len(base)
    if not ch or var[-1]["content"] != base[-1]["content"]:
        return False
    lim = n - 4 if n >= 5 else 0
    return ch[0] <= lim


def ok_late(base, var):
    ch = changed(base, var)
    n = len(base)
    if not ch:
        return False
    lo = n - 3 if n >= 5 else 1
    if ch[0] < lo:
        return False
    return any(var[i]["role"] == "user" for i in ch)


# ------------------------------------------------------------------ chatter / noise
GREET = ["Hi! ", "Hello, ", "hey there, ", "Good morning. ", "hi, hope you're well. ", "Hey! Quick question. ",
         "Hello again! ", "Evening! ", "hiya. ", "Hi there. ", "Hi, thanks for being here. ", "hello hello. "]
THANKS_PREFIX = ["Thanks! ", "ok thank you. ", "Great, thanks. ", "Perfect, cheers. ", "Got it, thanks! ",
                 "appreciate it. ", "Thanks, that's helpful. ", "ok cool. ", "Makes sense, thank you. "]
SIGNOFF = [" Thanks!", " Thanks in advance.", " cheers", " Appreciate the help!", " ty", " thx :)",
           " Thank you so much.", " Much appreciated."]
FILLER = [
    ("ok, thanks, that's helpful", "You're welcome! Anything else I can help with?"),
    ("hang on, let me grab a coffee", "Sure, take your time."),
    ("sorry, my cat just walked across the keyboard lol", "No problem! What would you like to ask?"),
    ("cool, that makes sense", "Great! Let me know if you have any other questions."),
    ("one sec, someone's at the door", "No rush, I'll be here."),
    ("ok", "Is there anything else you'd like to know?"),
    ("thank you so much, you've been really patient", "Happy to help! What else can I do for you?"),
    ("wait, I have one more question", "Of course, go ahead."),
    ("hmm ok let me think", "Take your time."),
    ("you're a lifesaver honestly", "Glad I could help! Anything else?"),
]
OPENERS = [
    ("hi", "Hello! How can I help you today?"),
    ("hello, is anyone there?", "Hi! I'm here. What can I help you with?"),
    ("are you a real person?", "I'm a virtual assistant, but I can help with most questions. What do you need?"),
    ("good morning!", "Good morning! What can I do for you?"),
    ("hey, got a minute?", "Of course! What's up?"),
    ("hi, I have a couple of questions", "Sure, happy to help. What's your first question?"),
]
ASSIST_GREET = ["Hi! ", "Hello! ", "Happy to help. ", "Sure! ", "Good question. "]
TRANSITIONS = ["", "", "Different question. ", "Ok, something else now. ", "Thanks! Another thing: ",
               "Got it. Separate topic: ", "Also, unrelated: "]
SYSTEMS = [
    "You are a helpful customer support assistant.",
    "You are a friendly virtual assistant. Answer concisely.",
    "You are an AI assistant. Be accurate and brief.",
]


def prefix_first_user(conv, pre):
    out = copy.deepcopy(conv)
    for m in out:
        if m["role"] == "user":
            m["content"] = pre + m["content"]
            break
    return out


def chat(conv, rng, budget):
    """Add content-free chatter. budget = max number of messages allowed."""
    for _ in range(20):
        out = copy.deepcopy(conv)
        ops = rng.sample(["greet", "thanks", "signoff", "filler", "opener", "agreet"], k=rng.choice([1, 2, 2, 3]))
        for op in ops:
            if op == "greet":
                out = prefix_first_user(out, rng.choice(GREET))
            elif op == "thanks" and len(out) >= 3:
                out[-1]["content"] = rng.choice(THANKS_PREFIX) + out[-1]["content"]
            elif op == "signoff":
                out[-1]["content"] = out[-1]["content"] + rng.choice(SIGNOFF)
            elif op == "filler" and len(out) + 2 <= budget and len(out) >= 3:
                u, a = rng.choice(FILLER)
                out = out[:-1] + [msg("user", u), msg("assistant", a)] + out[-1:]
            elif op == "opener" and len(out) + 2 <= budget:
                u, a = rng.choice(OPENERS)
                out = [msg("user", u), msg("assistant", a)] + out
            elif op == "agreet":
                for m in out:
                    if m["role"] == "assistant":
                        m["content"] = rng.choice(ASSIST_GREET) + m["content"]
                        break
        if out != conv and len(out) <= budget:
            return out
    return None


def norm(c):
    c = c.lower()
    c = re.sub(r"[^\w\s]", "", c)
    return " ".join(c.split())


def noisy_text(c, rng):
    ops = rng.sample(["lower", "strip", "extra", "cap", "space", "commas", "upperfirst"], k=rng.choice([1, 2]))
    for op in ops:
        if op == "lower":
            c = c.lower()
        elif op == "strip":
            c = re.sub(r"[?.!]+$", "", c)
        elif op == "extra":
            c = c + ("??" if c.endswith("?") else "!")
        elif op == "cap" and c:
            c = c[0].upper() + c[1:]
        elif op == "space":
            c = "  " + c.replace(" ", "  ", 1) + " "
        elif op == "commas":
            c = re.sub(r",(?=\s)", "", c)
        elif op == "upperfirst" and c:
            c = c[0].lower() + c[1:]
    return c


def exactify(conv, rng):
    for _ in range(20):
        out = []
        for m in conv:
            c = m["content"]
            if m["role"] == "user" and rng.random() < 0.8:
                c = noisy_text(c, rng)
            out.append(msg(m["role"], c))
        if out != conv and all(norm(x["content"]) == norm(y["content"]) for x, y in zip(out, conv)):
            return out
    return None


# ------------------------------------------------------------------ validation
def valid_side(conv):
    if not (2 <= len(conv) <= MAX_MSGS):
        return False
    if conv[-1]["role"] != "user":
        return False
    roles = [m["role"] for m in conv if m["role"] != "system"]
    if any(m["role"] == "system" for m in conv[1:]):
        return False
    for x, y in zip(roles, roles[1:]):
        if x == y:
            return False
    if roles[0] != "user":
        return False
    nu = sum(1 for r in roles if r == "user")
    if not (1 <= nu <= 4):
        return False
    return all(isinstance(m["content"], str) and m["content"].strip() for m in conv)


def check_conv(conv, what):
    roles = [m["role"] for m in conv]
    assert roles[0] == "user" and roles[-1] == "user", what
    for x, y in zip(roles, roles[1:]):
        assert x != y, what


# ------------------------------------------------------------------ scenario expansion
def expand(idx, s, irr_pool):
    rng = random.Random(SEED * 1000 + idx)
    dom = s["domain"]
    tag = "%s#%d" % (dom, idx)
    B = parse(s["base"])
    R = parse(s["rew"])
    check_conv(B, tag + " base")
    check_conv(R, tag + " rew")
    assert sum(m["role"] == "user" for m in B) >= 2, tag + " base needs >=2 user turns"
    assert B[-1]["content"] != R[-1]["content"], tag + " rew last must be reworded"
    for x, y in zip([m for m in B if m["role"] == "user"], [m for m in R if m["role"] == "user"]):
        assert x["content"] != y["content"], tag + " every user turn must be reworded"

    def variant(subs, kind):
        if not subs:
            return None, None
        for o, _ in subs:
            assert found(o, B), "%s %s: %r not found in base" % (tag, kind, o)
        vb = apply_subs(B, subs)
        okf = ok_early if kind == "early" else ok_late
        assert okf(B, vb), "%s %s variant breaks position rule" % (tag, kind)
        vr = None
        if all(found(o, R) for o, _ in subs):
            cand = apply_subs(R, subs)
            if okf(R, cand):
                vr = cand
        return vb, vr

    EB, ER = variant(s["early"], "early")
    LB, LR = variant(s["late"], "late")
    F = None
    if s["flip"]:
        F = parse(s["flip"]) + [msg("user", B[-1]["content"])]
        check_conv(F, tag + " flip")
        assert F[:-1] != B[:-1]
    IB = IR = None
    if s["intent"]:
        assert s["intent"] != B[-1]["content"]
        IB = B[:-1] + [msg("user", s["intent"])]
        IR = R[:-1] + [msg("user", s["intent"])]

    others = [t for d, t in irr_pool if d != dom]

    def irr_add(conv):
        for _ in range(10):
            ex = parse(rng.choice(others))
            if len(ex) + len(conv) > MAX_MSGS - 1:
                return None
            c2 = prefix_first_user(conv, rng.choice(TRANSITIONS))
            return ex + c2
        return None

    def ch(conv, budget=MAX_MSGS - 1):
        return chat(conv, rng, budget) if conv else None

    cands = collections.defaultdict(list)  # cat -> list of (priority, a, b)

    def add(cat, pri, a, b):
        if a is None or b is None:
            return
        cands[cat].append((pri, a, b))

    # ---- true
    add("reworded", 0, B, R)
    add("reworded", 1, EB, ER)
    add("reworded", 1, LB, LR)
    add("reworded", 2, exactify(B, rng), R)
    add("extra_chatter", 0, B, ch(B))
    add("extra_chatter", 1, R, ch(R))
    add("extra_chatter", 2, EB or LB, ch(EB or LB))
    add("irrelevant_history", 0, B, irr_add(B))
    add("irrelevant_history", 1, R, irr_add(R))
    add("irrelevant_history", 2, LB or EB, irr_add(LB or EB) if (LB or EB) else None)
    add("irrelevant_history", 3, irr_add(B), R)
    add("exact_repeat", 0, B, exactify(B, rng))
    add("exact_repeat", 1, R, exactify(R, rng))
    # ---- false
    if EB:
        add("early_detail", 0, B, EB)
        add("early_detail", 1, R, EB) if (ER is None or rng.random() < 0.5) else add("early_detail", 1, ER, B)
        add("early_detail", 2, ch(R), EB)
        add("early_detail", 3, irr_add(B), EB)
    if LB:
        add("late_detail", 0, B, LB)
        add("late_detail", 1, R, LB) if (LR is None or rng.random() < 0.5) else add("late_detail", 1, LR, B)
        add("late_detail", 2, ch(R), LB)
        add("late_detail", 3, irr_add(B), LB)
    if F:
        add("context_flip", 0, B, F)
        add("context_flip", 1, R, F)
        add("context_flip", 2, ch(B), F)
        add("context_flip", 3, B, ch(F))
    if IB:
        add("intent_flip", 0, B, IB)
        add("intent_flip", 1, B, IR)
        add("intent_flip", 2, ch(R), IB)
        add("intent_flip", 3, R, IR)
    return dom, cands


def key_of(a, b):
    na = json.dumps([(m["role"], norm(m["content"])) for m in a])
    nb = json.dumps([(m["role"], norm(m["content"])) for m in b])
    return "||".join(sorted([na, nb]))


def main():
    rng = random.Random(SEED)
    irr_pool = list(convlib.IRRELEVANT)
    sids = [s["scenario"] for s in convlib.SCENARIOS]
    assert len(set(sids)) == len(sids), "scenario ids must be unique"
    pools = collections.defaultdict(list)  # cat -> list of (pri, shuffle, dom, a, b)
    for idx, s in enumerate(convlib.SCENARIOS):
        dom, cands = expand(idx, s, irr_pool)
        for cat, lst in cands.items():
            for pri, a, b in lst:
                pools[cat].append((pri, rng.random(), dom, idx, a, b))

    seen = set()
    rows = []
    avail = {}
    for cat in TARGETS:
        lst = sorted(pools[cat], key=lambda t: (t[0], t[1]))
        avail[cat] = len(lst)
        taken = 0
        for pri, _, dom, idx, a, b in lst:
            if taken >= TARGETS[cat]:
                break
            a, b = copy.deepcopy(a), copy.deepcopy(b)
            if rng.random() < 0.5:
                a, b = b, a
            # occasionally a shared system prompt on both sides
            if rng.random() < 0.2 and len(a) < MAX_MSGS and len(b) < MAX_MSGS:
                sp = rng.choice(SYSTEMS)
                a = [msg("system", sp)] + a
                b = [msg("system", sp)] + b
            if not (valid_side(a) and valid_side(b)):
                continue
            if a == b:
                continue
            k = key_of(a, b)
            if cat != "exact_repeat" and k.split("||")[0] == k.split("||")[1]:
                continue
            if k in seen:
                continue
            seen.add(k)
            # both sides come from scenario idx (unrelated history is taken from
            # IRRELEVANT, never from another scenario), so that is the pair's scenario
            rows.append({"a": a, "b": b, "same_answer": cat in TRUE_CATS, "category": cat, "domain": dom,
                         "scenario": sids[idx]})
            taken += 1

    rng.shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

    # ---- re-read and verify
    n = 0
    cat_c = collections.Counter()
    lab_c = collections.Counter()
    dom_c = collections.Counter()
    dom_lab = collections.Counter()
    scen_c = collections.Counter()
    with open(OUT, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            assert set(r) == {"a", "b", "same_answer", "category", "domain", "scenario"}
            assert r["scenario"] in sids and r["scenario"].rsplit("-", 1)[0] == r["domain"], r
            for side in ("a", "b"):
                assert valid_side(r[side]), r
                for m in r[side]:
                    assert set(m) == {"role", "content"}
            n += 1
            cat_c[r["category"]] += 1
            lab_c[r["same_answer"]] += 1
            dom_c[r["domain"]] += 1
            dom_lab[(r["domain"], r["same_answer"])] += 1
            scen_c[r["scenario"]] += 1
    digest = hashlib.sha256(open(OUT, "rb").read()).hexdigest()
    print("rows", n, "sha256", digest)
    print("available candidates:", avail)
    for c in TARGETS:
        print("  %-20s %4d" % (c, cat_c[c]))
    print("labels", dict(lab_c))
    print("domains", dict(dom_c))
    per = sorted(scen_c.values())
    print("scenarios", len(scen_c), "of", len(sids), "pairs/scenario min/median/max",
          per[0], per[len(per) // 2], per[-1])
    write_readme(n, cat_c, lab_c, dom_c, dom_lab, digest, scen_c)


def write_readme(n, cat_c, lab_c, dom_c, dom_lab, digest, scen_c):
    per = sorted(scen_c.values())
    lines = []
    lines.append("# blind2 / conv_raw: conversation-level semantic-cache pairs")
    lines.append("")
    lines.append("Written by: Claude (Anthropic AI model), working as a helper session that the project's")
    lines.append("main session started for this task. Date: 2026-12-07.")
    lines.append("")
    lines.append("## Provenance")
    lines.append("")
    lines.append("- Written blind: the author did not open, read or search any other pair set, the")
    lines.append("  training data, the cache code, docs or scripts of this repository. Every scenario")
    lines.append("  (stored chat, reworded chat, changed facts, flipped history, look-alike question,")
    lines.append("  unrelated exchanges) was written by hand from general knowledge for this set.")
    lines.append("- All brands are invented (Brightwell Bank, Kestrel Credit Union, Corvana, Tellio,")
    lines.append("  Fibrelane, Greyridge, TaxNest, Skyline Air, Parcelio, Streamory, Orrin Logistics,")
    lines.append("  Payvanta, Harbourline, Bluepine, Meadowcrest, ...). Nothing was copied from any")
    lines.append("  external dataset.")
    lines.append("- Only light templating is generated: greetings / thanks / filler turns, casing and")
    lines.append("  punctuation noise, an optional shared generic system prompt, and the pairing of")
    lines.append("  hand-written pieces. See make_conversations.py (stdlib only, deterministic seed).")
    lines.append("")
    lines.append("## Files")
    lines.append("")
    lines.append("- conversations.jsonl: one pair per line: {\"a\": [messages], \"b\": [messages],")
    lines.append("  \"same_answer\": bool, \"category\": str, \"domain\": str, \"scenario\": str}. Each side")
    lines.append("  is 2-8 messages (roles system/user/assistant, 1-4 user turns) and ends with a user")
    lines.append("  message. \"scenario\" names the hand-written scenario the pair was built from, as")
    lines.append("  \"<domain>-<n>\" (n = 0-based position of the scenario within its domain in the data")
    lines.append("  files; stable across reruns). Both sides of a pair always come from that one")
    lines.append("  scenario (unrelated history is drawn from data_irrelevant.py, not from scenarios).")
    lines.append("- make_conversations.py: rebuilds conversations.jsonl and this README.")
    lines.append("- data_p1.py .. data_p4.py: the hand-written scenarios (16 domains x 9).")
    lines.append("- data_irrelevant.py: hand-written unrelated one-turn exchanges.")
    lines.append("- convlib.py: tiny registry used by the data files.")
    lines.append("")
    lines.append("sha256(conversations.jsonl) = %s" % digest)
    lines.append("")
    lines.append("## Label semantics")
    lines.append("")
    lines.append("same_answer=true means the stored answer for side a's last question, read in its")
    lines.append("context, may be served for side b (and vice versa).")
    lines.append("")
    lines.append("- true: exact_repeat (casing/punctuation/whitespace only), reworded (every user turn")
    lines.append("  reworded, same facts), extra_chatter (greetings/thanks/content-free turns added or")
    lines.append("  removed; some also reworded), irrelevant_history (an unrelated earlier exchange")
    lines.append("  added or removed).")
    lines.append("- false: early_detail (a fact in the first exchange that the answer depends on")
    lines.append("  differs), late_detail (a fact in the last or second-to-last user turn differs),")
    lines.append("  context_flip (identical last question, different history so it means something")
    lines.append("  else), intent_flip (same or reworded history, look-alike last question asking for")
    lines.append("  something different).")
    lines.append("")
    lines.append("## Counts")
    lines.append("")
    lines.append("Total pairs: %d (same_answer=true: %d, false: %d)" % (n, lab_c[True], lab_c[False]))
    lines.append("")
    lines.append("| category | label | pairs |")
    lines.append("|---|---|---|")
    for c in TARGETS:
        lines.append("| %s | %s | %d |" % (c, "true" if c in TRUE_CATS else "false", cat_c[c]))
    lines.append("")
    lines.append("| domain | true | false | total |")
    lines.append("|---|---|---|---|")
    for d in sorted(dom_c):
        lines.append("| %s | %d | %d | %d |" % (d, dom_lab[(d, True)], dom_lab[(d, False)], dom_c[d]))
    lines.append("")
    lines.append("## Use")
    lines.append("")
    lines.append("Calibration of cache thresholds (with a statistical bound on false hits) and a")
    lines.append("held-out test. Pairs built from the same scenario share text, so make the")
    lines.append("calibration/test split by the \"scenario\" key (e.g. a hash of r[\"scenario\"]),")
    lines.append("never by a hash of each pair: then all pairs of one scenario land in the same split.")
    lines.append("There are %d scenarios; pairs per scenario: min %d, median %d, max %d."
                 % (len(scen_c), per[0], per[len(per) // 2], per[-1]))
    lines.append("")
    with open(README, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
