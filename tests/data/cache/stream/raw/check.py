import json, os, re, sys
from collections import Counter, defaultdict
here = os.path.dirname(os.path.abspath(__file__))
errs = []
fams = []
with open(os.path.join(here, "families.jsonl"), encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        try:
            fams.append(json.loads(line))
        except Exception as e:
            errs.append(f"line {n}: bad json {e}")
ids = Counter(f["family"] for f in fams)
for k, v in ids.items():
    if v > 1: errs.append(f"duplicate family id {k}")
seen = {}
n_int = n_q = 0
dom_f = Counter(); dom_i = Counter(); dom_q = Counter()
size = Counter()
norm = lambda s: re.sub(r"\s+", " ", s.strip().lower())
for f in fams:
    fid = f["family"]; d = f["domain"]
    if not fid or not d: errs.append(f"{fid}: empty id/domain")
    ints = f["intents"]
    size[len(ints)] += 1
    if len(ints) < 2: errs.append(f"{fid}: <2 intents")
    iids = Counter(i["intent"] for i in ints)
    for k, v in iids.items():
        if v > 1: errs.append(f"{fid}: duplicate intent {k}")
    answers = Counter(i["answer"] for i in ints)
    for k, v in answers.items():
        if v > 1: errs.append(f"{fid}: duplicate answer")
    dom_f[d] += 1
    for i in ints:
        n_int += 1; dom_i[d] += 1
        qs = i["questions"]
        if not i.get("answer"): errs.append(f"{fid}/{i['intent']}: empty answer")
        if len(qs) < 4: errs.append(f"{fid}/{i['intent']}: only {len(qs)} questions")
        for q in qs:
            n_q += 1; dom_q[d] += 1
            k = norm(q)
            if not k: errs.append(f"{fid}/{i['intent']}: empty question")
            if k in seen:
                errs.append(f"duplicate question {q!r} in {fid}/{i['intent']} and {seen[k]}")
            else:
                seen[k] = f"{fid}/{i['intent']}"
print(f"families={len(fams)} intents={n_int} questions={n_q}")
print("families by #intents:", dict(sorted(size.items())))
print(f"{'domain':32s} fam  int    q")
for d in sorted(dom_f):
    print(f"{d:32s} {dom_f[d]:3d} {dom_i[d]:4d} {dom_q[d]:4d}")
if errs:
    print("ERRORS:"); [print(" ", e) for e in errs]; sys.exit(1)
print("OK")
