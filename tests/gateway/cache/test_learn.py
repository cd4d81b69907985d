"""Thresholds that learn from unserved near-misses (gateway/cache/learn.py): the refit rule by hand, the
window that moves them back when the labels turn, and the whole loop through a real SemanticCache (the
real MiniLM embedder; the checker's scores scripted so that the test is about the learning)."""

from __future__ import annotations

import asyncio
import json

import pytest

from gateway.cache import CacheConfig, CacheScope, SemanticCache
from gateway.cache.calibration import upper
from gateway.cache.checker import Checker
from gateway.cache.learn import KINDS, Label, ThresholdLearner, choose_looser

GRID = [(t, c) for t in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95) for c in (0.0, 0.5, 0.9)]
BASE = (0.9, 0.9)


def labels(points, agree=True, source="near_miss"):
    return [Label("single", s, c, agree, source, 0.0) for s, c in points]


def test_no_labels_or_too_few_keep_the_calibrated_thresholds():
    assert choose_looser([], BASE, GRID, 0.01) is None
    # 298 right answers in the region: upper(0, 298) is just over 1%, not enough to move at a 1% bound
    assert upper(0, 298) > 0.01 >= upper(0, 299)
    assert choose_looser(labels([(0.85, 0.95)] * 298), BASE, GRID, 0.01) is None
    assert choose_looser(labels([(0.85, 0.95)] * 299), BASE, GRID, 0.01) == (0.8, 0.9)


def test_the_region_that_holds_the_most_right_answers_within_the_bound():
    right = labels([(0.85, 0.95)] * 400 + [(0.65, 0.95)] * 400)
    wrong_low = labels([(0.65, 0.95)] * 30, agree=False)  # 30 wrong of 430 at cosine 0.6-0.7: too many
    got = choose_looser(right + wrong_low, BASE, GRID, 0.01)
    assert got == (0.8, 0.9)  # the 0.8 region only: adding 0.6-0.7 would let 30 wrong answers through
    assert choose_looser(right, BASE, GRID, 0.01) == (0.6, 0.9)  # without them, both regions
    # labels the calibrated thresholds already serve do not count against a move (they are bounded by
    # the calibration and watched by live verification), and points above BASE are never chosen
    served_wrong = labels([(0.97, 0.99)] * 50, agree=False)
    assert choose_looser(right + served_wrong, BASE, GRID, 0.01) == (0.6, 0.9)
    # a low checker score keeps a pair out of any region that requires a higher one
    low_score = labels([(0.85, 0.2)] * 20, agree=False)
    assert choose_looser(right + low_score, BASE, GRID, 0.01) == (0.6, 0.9)


def naive(labels, base, grid, bound):
    """The rule read literally: every point, its region's labels counted one by one."""
    best = None
    for t, c in grid:
        if t > base[0] or c > base[1] or (t, c) == base:
            continue
        region = [
            lb
            for lb in labels
            if lb.similarity >= t and lb.score >= c and not (lb.similarity >= base[0] and lb.score >= base[1])
        ]
        m, g = len(region), sum(lb.agree for lb in region)
        if m and g and upper(m - g, m) <= bound and (best is None or (g, t, c) > best):
            best = (g, t, c)
    return None if best is None else best[1:]


@pytest.mark.parametrize("seed", range(12))
def test_the_counted_rule_matches_the_literal_one(seed):
    import random

    rng = random.Random(seed)
    grid = [(round(0.5 + 0.05 * i, 2), round(0.1 * j, 1)) for i in range(10) for j in range(10)]
    base = (0.9, 0.8)
    wrong_rate = rng.choice([0.0, 0.002, 0.01, 0.05])
    labels = []
    for _ in range(rng.choice([50, 400, 1500, 3000])):
        sim, score = rng.choice([0.5, 0.55, rng.random()]), rng.random()
        wrong = rng.random() < (0.4 if score < 0.6 or sim < 0.6 else wrong_rate)  # look-alikes score low
        labels.append(Label("single", sim, score, not wrong, "near_miss", 0.0))
    bound = rng.choice([0.01, 0.05, 0.2])
    got = choose_looser(labels, base, grid, bound)
    assert got == naive(labels, base, grid, bound)
    if seed in (0, 4, 5):  # seeds whose labels support a move (others: too few, or too many wrong)
        assert got is not None and got != (0.5, 0.0)


class Config:
    learn_window = 1000
    learn_refit_every = 50
    learn_max_pending = 4
    learn_floor = 0.5

    def bounds(self):
        return {"single": 0.01, "conversation": 0.02}


def learner(config=None) -> ThresholdLearner:
    async def never(*a):
        raise AssertionError("not used")

    return ThresholdLearner(
        config or Config(), base=lambda kind: BASE, grid=lambda kind: GRID, fetch=never, score=never, agree=never
    )


def test_refits_move_down_and_the_sliding_window_moves_back_when_labels_turn():
    lr = learner()
    for _ in range(400):
        lr.add("single", 0.85, 0.95, True, "near_miss")
    assert lr.thresholds("single") == (0.8, 0.9) and lr.thresholds("conversation") is None
    assert lr.moves[-1]["from"] == list(BASE) and lr.moves[-1]["to"] == [0.8, 0.9]
    # drift: the same region now answers differently; once the window holds enough of it, back to base
    for _ in range(700):
        lr.add("single", 0.85, 0.95, False, "near_miss")
    assert lr.thresholds("single") is None and lr.moves[-1]["to"] == list(BASE)
    s = lr.stats()
    assert s["kinds"]["single"]["labels"] == 1000 and s["counts"]["disagree"] == 700
    assert s["counts"]["refits"] == 22 and len(lr.moves) == 2


def test_a_full_queue_drops_and_never_waits():
    async def go():
        lr = learner()
        await lr.start()
        lr._worker.cancel()
        from gateway.cache.learn import NearMiss

        near = NearMiss("single", "k", "q", "e", 0.8, None, False, None)
        got = [lr.offer(near, "answer") for _ in range(6)]
        empty = lr.offer(near, "  ")
        await lr.close()
        return lr, got, empty

    lr, got, empty = asyncio.run(go())
    assert got == [True] * 4 + [False] * 2 and lr.counts["dropped"] == 2 and not empty


# -------------------------------------------------------------------- the loop through a real cache

PAIRS = [
    ("How do I reset my router password?", "What are the steps to change the admin password on my router?"),
    ("What is the boiling point of water at sea level?", "At sea level, water boils at what temperature?"),
    ("How long should I boil an egg for a soft yolk?", "Soft-boiled egg: how many minutes in boiling water?"),
    ("How can I see my screen time on my phone?", "Where do I find the screen time stats on my phone?"),
    ("What is the capital city of Australia?", "Name the city that serves as the Australian seat of government."),
    ("How do I cancel my gym membership?", "What's the way to end my membership at the gym?"),
    ("How many grams are in a pound?", "A pound equals how many grams?"),
    ("How do I export a spreadsheet as CSV?", "Can I save my spreadsheet in CSV format, and how?"),
    ("Why is the sky blue during the day?", "What makes the daytime sky look blue?"),
    ("How do I unblock a contact on my messaging app?", "Steps to remove a block on someone in my chat app?"),
]


class Scripted(Checker):
    """The checker's scores, scripted: 0.95 for every pair (the test is about the learning loop)."""

    name = "cross_encoder"

    def scores(self, pairs, conversation=False, replies=None):
        import numpy as np

        return np.full(len(pairs), 0.95, np.float32)


def test_near_misses_are_labelled_with_the_fresh_answer_and_move_the_threshold(tmp_path, embedder):
    """Base thresholds 0.95 (cosine): the paraphrases miss. Each miss is answered (the same answer as
    the stored one: a right label; the test's bound of 0.2 needs 14 right labels in a region), the learner
    refits, and the next paraphrase is served at the learned threshold; a hit served only thanks to it
    goes to verification at learn_verify_share (1.0 here), whose verdict is a label too."""
    rows = [[t, c, 0, 100, 10, 100] for t, c in GRID]
    rows = [[t, c, (0 if t >= 0.95 else 50), n, h, m] for t, c, _, n, h, m in rows]
    table = tmp_path / "cal.json"
    table.write_text(json.dumps({"tables": {"cross_encoder": {"single": {"rows": rows}}}}))
    config = CacheConfig(
        path=str(tmp_path / "c.jsonl"),
        calibration=str(table),
        max_false_hit_rate=0.2,
        learn=True,
        learn_refit_every=1,
        learn_verify_share=1.0,
        verify_share=0.0,
        verify_first=0,
        flush_interval_s=0.01,
    )
    assert (config.threshold, config.checker_threshold) == (0.95, 0.9)

    async def body():
        cache = SemanticCache(config, embedder=embedder, checker=Scripted())
        verified = []

        async def answer(request, tier):
            verified.append(request)
            return "the answer"

        cache.attach_verifier(answer)
        lr = cache.attach_learner()
        await cache.start()
        sims = []
        for round_ in range(2):
            for i, (a, b) in enumerate(PAIRS):
                if lr.thresholds("single") is not None:
                    break
                scope, _ = CacheScope.from_request(
                    f"t{round_}-{i}", "m", [{"role": "user", "content": a}], {"temperature": 0}
                )
                await cache.store(scope, a, "the answer", "stop", {}, "m")
                got = await cache.lookup(scope, b)
                assert got.kind == "miss" and got.near is not None and got.near.entry_id
                sims.append(got.near.similarity)
                await cache.store(scope, b, "the answer", "stop", {}, "m")  # the model's fresh answer
                await lr.drain()
        # upper(0, 14) <= 0.2 < upper(0, 13): the 14th right label is the first that can move it
        assert lr.counts["near_miss"] == 14 and lr.counts["agree"] == 14
        learned = lr.thresholds("single")
        assert learned is not None and learned[0] <= min(sims) and learned[1] <= 0.95
        assert cache.stats()["learning"]["moves"]
        # served now: a fresh paraphrase pair in a new scope hits semantically at the learned threshold
        a, b = PAIRS[0]
        scope, _ = CacheScope.from_request("t9", "m", [{"role": "user", "content": a}], {"temperature": 0})
        await cache.store(scope, a, "the answer", "stop", {}, "m")
        hit = await cache.lookup(scope, b)
        assert hit.kind == "semantic" and hit.score == pytest.approx(0.95)
        assert cache.offer_verification(scope, b, hit, "request", "m")  # forced: learned region
        await cache.verifier.drain()
        assert verified == ["request"] and lr.counts["verified"] == 1
        await cache.close()

    asyncio.run(body())


def test_learning_is_off_by_default_and_validated():
    assert CacheConfig().learn is False
    with pytest.raises(ValueError, match="cache.learn_floor"):
        CacheConfig(learn_floor=1.5)
    with pytest.raises(ValueError, match="cache.learn_window"):
        CacheConfig(learn_window=0)
    assert set(KINDS) == {"single", "conversation"}
