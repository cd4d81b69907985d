"""Parse hand-written seed blocks in hand/*.txt into (a, b, label, kind) pairs."""
import glob, os, sys

KINDS = {
    "p": ("paraphrase", 1), "h": ("heavy_paraphrase", 1), "m": ("minor_word", 1),
    "t": ("near_repeat", 1), "n": ("negation", 0), "e": ("entity_swap", 0),
    "u": ("number_change", 0), "s": ("scope_change", 0), "r": ("related", 0),
}

def parse(path):
    pairs, seeds = [], []
    seed = None
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line:
                seed = None
            continue
        tag, _, text = line.partition(":")
        text = text.strip()
        if tag == "S":
            seed = text
            seeds.append(text)
            continue
        if tag not in KINDS or seed is None or not text:
            sys.exit(f"{path}:{ln}: bad line {line!r}")
        kind, label = KINDS[tag]
        pairs.append({"a": seed, "b": text, "label": label, "kind": kind, "tag": tag})
    return seeds, pairs

def load_all(folder):
    seeds, pairs = [], []
    for f in sorted(glob.glob(os.path.join(folder, "*.txt"))):
        s, p = parse(f)
        seeds += s; pairs += p
    return seeds, pairs

if __name__ == "__main__":
    from collections import Counter
    s, p = load_all(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hand"))
    print("seeds", len(s), "pairs", len(p))
    print(Counter(x["kind"] for x in p))
    print(Counter(x["label"] for x in p))
