"""The checker's training data holds no copy of an evaluation pair (word-Jaccard 0.7 on both sides), and
the check finds one that is planted."""

from __future__ import annotations

import json
import shutil

from tests.support.scripts import load_script

_check = load_script("check_cache_leaks")
TRAIN_DIR, eval_files, leaks = _check.TRAIN_DIR, _check.eval_files, _check.leaks


def test_no_training_pair_is_close_to_an_evaluation_pair():
    train = sorted(TRAIN_DIR.glob("train_*.jsonl"))
    assert train and len(eval_files()) >= 4  # dev, test and the blind splits
    found = leaks(train, eval_files())
    assert found == [], f"{len(found)} training pairs copy evaluation pairs, e.g. {found[:3]}"


def test_a_planted_copy_of_a_test_pair_is_found(tmp_path):
    for f in TRAIN_DIR.glob("train_*.jsonl"):
        shutil.copy(f, tmp_path / f.name)
    test = [f for f in eval_files() if f.name == "test.jsonl"][0]
    row = json.loads(test.read_text(encoding="utf-8").splitlines()[7])
    # the copy with the sides swapped and a word changed: still a copy on both sides
    planted = {"a": row["b"], "b": row["a"] + " please" if isinstance(row["a"], str) else row["a"], "label": 1}
    with open(tmp_path / "train_planted.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps(planted) + "\n")
    found = leaks(sorted(tmp_path.glob("train_*.jsonl")), eval_files())
    assert any(x["train"] == "train_planted.jsonl:1" for x in found), found


def test_the_prefix_filtered_join_finds_exactly_what_the_full_comparison_finds():
    """close_sides keeps only each side's rarest words to find candidates (the AllPairs prefix filter);
    on random word sets with many near-copies it must return exactly the pairs a comparison of every
    eval side with every training side finds, at the threshold and around it."""
    import random

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)] + ["the", "how", "do", "i"] * 10  # common words drawn often
    base = [frozenset(rng.sample(vocab, rng.randint(1, 9))) for _ in range(150)]

    def near(s: frozenset[str]) -> frozenset[str]:
        s = set(s)
        for _ in range(rng.randint(0, 2)):
            (s.discard(rng.choice(sorted(s))) if s and rng.random() < 0.5 else s.add(rng.choice(vocab)))
        return frozenset(s)

    evals = base[:80] + [frozenset()]
    train = [near(s) for s in base] + [frozenset()]
    for threshold in (0.5, 0.7, 0.75, 1.0):
        brute = {
            (i, j)
            for i, a in enumerate(evals)
            for j, b in enumerate(train)
            if a & b and len(a & b) / len(a | b) >= threshold
        }
        assert _check.close_sides(evals, train, threshold) == brute, threshold
        assert brute  # the case has matches to find
