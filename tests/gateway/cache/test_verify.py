"""Live verification's bookkeeping, by hand: who gets verified, what a full queue does, the estimate, and
a scope over the bound moving up the calibration table until its window is back under it."""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np
import pytest

from gateway.cache import CacheConfig
from gateway.cache.calibration import Row, interval
from gateway.cache.verify import Job, Verifier

ROWS = [
    Row(0.5, 0.5, 30, 400, 300, 400),
    Row(0.7, 0.5, 10, 400, 250, 400),
    Row(0.8, 0.5, 3, 400, 200, 400),
    Row(0.9, 0.9, 0, 400, 100, 400),
]


@pytest.fixture
def config(tmp_path):
    table = {"tables": {"cross_encoder": {"single": {"rows": [list(r.__dict__.values()) for r in ROWS]}}}}
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(table))
    # bound 0.12: the table's first row (upper bound of 30/400 ~ 0.10) is the start
    return CacheConfig(
        calibration=str(path),
        max_false_hit_rate=0.12,
        verify_share=0.25,
        verify_first=3,
        verify_min_window=10,
        verify_max_pending=4,
    )


def job(scope="s1", **kw) -> Job:
    base = dict(
        scope_key=scope,
        kind="single",
        tier="t",
        tenant="key:abc",
        entry_id="e",
        question="q",
        served="a",
        lookup="semantic",
        similarity=0.9,
        request=None,
        uniform=True,
    )
    return Job(**{**base, **kw})


async def _unit(text):
    v = np.zeros(4, np.float32)
    v[hash(text) % 4] = 1
    return v


def make(config, **kw) -> Verifier:
    async def evict(entry_id):
        return True

    async def answer(request, tier):
        return "a"

    return Verifier(config, answer_fn=answer, embed=_unit, evict=evict, **kw)


def test_first_hits_then_a_share_and_a_full_queue_drops(config):
    async def go():
        v = make(config, rng=random.Random(0))
        await v.start()
        v._workers[0].cancel()  # nothing drains the queue: offers pile up
        chosen = [v.offer(job()) for _ in range(40)]
        await v.close()
        return v, chosen

    v, chosen = asyncio.run(go())
    assert chosen[:3] == [True, True, True]  # a new scope's first 3 hits, whatever the draw
    # after that a quarter by the draw, until 4 are queued; the rest are dropped, never waited on
    assert sum(chosen) == 4 and v.dropped > 0 and v.scopes["s1"].hits_verified == 4


def test_estimate_and_interval(config):
    v = make(config)
    for i in range(20):
        v.record(job(scope=f"s{i % 7}"), agree=i % 5 != 0)
    (e,) = v.estimates()
    assert (e["verified"], e["wrong"], e["rate"]) == (20, 4, 0.2)
    assert e["ci95"] == list(interval(4, 20))
    # first-N verifications are kept apart from the uniform sample
    v.record(job(uniform=False), agree=False)
    (e,) = v.estimates()
    assert e["wrong"] == 4 and e["first_hits"] == {"verified": 1, "wrong": 1}


def test_a_scope_over_the_bound_tightens_row_by_row(config):
    v = make(config)
    assert v.config_thresholds("single") == (0.5, 0.5)
    # 3 wrong in 10: 0.3 > 0.12 -> one row up (fewer calibration false hits, best recall)
    for i in range(10):
        v.record(job(), agree=i >= 3)
    st = v.scopes["s1"]
    assert st.thresholds == (0.7, 0.5) and len(st.moves) == 1 and st.window.verified == 0
    assert v.thresholds("s1") == (0.7, 0.5) and v.thresholds("other") is None
    # a window under the bound does not move it
    for i in range(10):
        v.record(job(), agree=i != 0)
    assert st.thresholds == (0.7, 0.5)
    st.window.verified = st.window.wrong = 0
    for _ in range(2):  # two bad windows: up two rows
        for i in range(10):
            v.record(job(), agree=i >= 5)
    assert st.thresholds == (0.9, 0.9) and [m["to"] for m in st.moves] == [[0.7, 0.5], [0.8, 0.5], [0.9, 0.9]]
    for _ in range(10):  # at the top: semantic hits stop (exact only)
        v.record(job(), agree=False)
    assert st.thresholds == (1.01, 1.01) and len(st.moves) == 4
    for _ in range(10):  # nothing stricter exists: no further move is recorded
        v.record(job(), agree=False)
    assert len(st.moves) == 4 and st.window.verified == 0
    assert [t["scope"] for t in v.stats()["tightened"]] == ["s1"]


def test_answers_agree(config):
    v = make(config)

    async def go():
        return (await v.answers_agree("The fee is 10 pounds.", "the fee is 10 pounds"), await v.answers_agree("", "x"))

    (same, _), (empty, _) = asyncio.run(go())
    assert same and not empty
