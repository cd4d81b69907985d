"""Thresholds that learn from the traffic, at no risk: labels from the near-misses the cache did not serve.

When a lookup misses but its best candidate is close (cosine >= ``cache.learn_floor``), the request is
answered by the model like any miss. Off the request path, once that fresh answer is known, the learner
scores the pair with the checker (when the lookup had not), and compares the fresh answer with the stored
candidate's answer (the verifier's ``answers_agree``): a label for that point of the (cosine, checker)
plane that served no one a wrong answer. Verified hits (``verify.py``) add labels too.

The refit (every ``learn_refit_every`` labels, over the last ``learn_window`` labels of a kind) moves the
thresholds below the calibrated ones (``base``) only where the traffic supports it:

    for each grid point P' at or below ``base`` on both thresholds, R = the labels P' would serve that
    ``base`` does not (cosine >= t' and score >= c', not both above base's); R's wrong share k/m must have
    a one-sided 95% Clopper-Pearson upper bound within the kind's ``max_false_hit_rate`` (the
    calibration's own rule, ``calibration.upper``). Among those P', the one whose R holds the most
    right answers; none: ``base``.

Why the region and not the whole plane: answers ``base`` serves are already bounded by the calibration
(and watched by live verification, which tightens a scope that crosses the bound); what the move adds
must be bounded on its own, so the served answers' false-hit share stays a mixture of two shares each
within the bound. With a 1% bound R needs about 300 labels and no wrong one before any move (about 470
with one): learning is slow by design. Since the window slides, a region whose labels turn (drift) moves
the thresholds back up at the next refit.

What it does not do: per-scope thresholds (one learned pair per kind of scope: singles, conversations);
only the best candidate of a lookup is labelled (a looser threshold could also serve a lower one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.cache.calibration import upper

log = logging.getLogger(__name__)

KINDS = ("single", "conversation")


@dataclass
class NearMiss:
    """A lookup that missed with a close best candidate; ``score`` is None when the checker did not read
    it on the request path (the candidate was below the cosine threshold)."""

    kind: str
    scope_key: str
    question: str
    entry_id: str
    similarity: float
    score: float | None
    conversation: bool
    replies: tuple[str, str] | None
    at: float = 0.0


@dataclass(frozen=True)
class Label:
    kind: str
    similarity: float
    score: float
    agree: bool
    source: str  # "near_miss" | "verified"
    at: float


class ThresholdLearner:
    """See the module docstring. ``base(kind)`` gives the calibrated thresholds; ``grid(kind)`` the
    (cosine, checker) points the calibration table holds; ``fetch(entry_id)`` the stored entry (its
    ``question`` and ``answer``), ``score(cached, incoming, conversation, replies)`` the checker's score,
    ``agree(stored, fresh)`` the answers' verdict."""

    def __init__(
        self,
        config,
        *,
        base: Callable[[str], tuple[float, float]],
        grid: Callable[[str], list[tuple[float, float]]],
        fetch: Callable[[str], Awaitable[Any]],
        score: Callable[..., Awaitable[float]],
        agree: Callable[[str, str], Awaitable[tuple[bool, float]]],
        clock: Callable[[], float] = time.time,
    ):
        self.config = config
        self.base, self.grid, self.fetch, self.score, self.agree = base, grid, fetch, score, agree
        self.clock = clock
        self.labels: dict[str, deque[Label]] = {k: deque(maxlen=config.learn_window) for k in KINDS}
        self.learned: dict[str, tuple[float, float] | None] = {k: None for k in KINDS}
        self.moves: deque[dict] = deque(maxlen=100)
        self.counts = {
            "near_miss": 0,
            "verified": 0,
            "agree": 0,
            "disagree": 0,
            "dropped": 0,
            "failed": 0,
            "gone": 0,
            "refits": 0,
        }
        self._since_refit = {k: 0 for k in KINDS}
        self._queue: asyncio.Queue[tuple[NearMiss, str]] | None = None
        self._worker: asyncio.Task | None = None

    # -- lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue(maxsize=self.config.learn_max_pending)
            self._worker = asyncio.create_task(self._work())

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._worker
        self._worker, self._queue = None, None

    async def drain(self) -> None:
        """Wait until every queued near-miss is labelled (tests, the replay)."""
        if self._queue is not None:
            await self._queue.join()

    # -- in -------------------------------------------------------------------------------------------

    def thresholds(self, kind: str) -> tuple[float, float] | None:
        """The learned thresholds of this kind of scope, or None (the calibrated ones hold)."""
        return self.learned.get(kind)

    def offer(self, near: NearMiss, fresh: str) -> bool:
        """After a near-miss was answered by the model: label it in the background (never blocks)."""
        if self._queue is None or not fresh.strip():
            return False
        try:
            self._queue.put_nowait((near, fresh))
        except asyncio.QueueFull:
            self.counts["dropped"] += 1
            return False
        return True

    def add(self, kind: str, similarity: float, score: float, agree: bool, source: str) -> None:
        """One label (a verified hit calls this directly); refits every ``learn_refit_every``."""
        self.labels[kind].append(Label(kind, float(similarity), float(score), bool(agree), source, self.clock()))
        self.counts[source] += 1
        self.counts["agree" if agree else "disagree"] += 1
        self._since_refit[kind] += 1
        if self._since_refit[kind] >= self.config.learn_refit_every:
            self.refit(kind)

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            near, fresh = await self._queue.get()
            try:
                await self._label(near, fresh)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a failed label is no label: counted apart
                self.counts["failed"] += 1
                log.warning("cache learning failed: %s: %s", type(exc).__name__, exc)
            finally:
                self._queue.task_done()

    async def _label(self, near: NearMiss, fresh: str) -> None:
        entry = await self.fetch(near.entry_id)
        if entry is None:  # expired or evicted meanwhile
            self.counts["gone"] += 1
            return
        score = near.score
        if score is None:
            score = await self.score(entry.question, near.question, near.conversation, near.replies)
        agree, _ = await self.agree(entry.answer, fresh)
        self.add(near.kind, near.similarity, score, agree, "near_miss")

    # -- the refit ------------------------------------------------------------------------------------

    def refit(self, kind: str) -> tuple[float, float] | None:
        self._since_refit[kind] = 0
        self.counts["refits"] += 1
        before = self.learned[kind]
        after = choose_looser(list(self.labels[kind]), self.base(kind), self.grid(kind), self.config.bounds()[kind])
        self.learned[kind] = after
        if after != before:
            labels = self.labels[kind]
            self.moves.append(
                {
                    "at": self.clock(),
                    "kind": kind,
                    "from": list(before or self.base(kind)),
                    "to": list(after or self.base(kind)),
                    "labels": len(labels),
                    "wrong": sum(not lb.agree for lb in labels),
                }
            )
            log.info("cache %s thresholds %s -> %s after %d labels", kind, before, after, len(labels))
        return after

    # -- reading --------------------------------------------------------------------------------------

    def stats(self) -> dict:
        kinds = {}
        for kind in KINDS:
            labels = self.labels[kind]
            sims = np.array([lb.similarity for lb in labels]) if labels else np.zeros(0)
            kinds[kind] = {
                "labels": len(labels),
                "wrong": int(sum(not lb.agree for lb in labels)),
                "base": list(self.base(kind)),
                "learned": list(self.learned[kind]) if self.learned[kind] else None,
                "similarity_quartiles": [round(float(q), 3) for q in np.quantile(sims, [0.25, 0.5, 0.75])]
                if len(sims)
                else [],
            }
        return {
            "enabled": True,
            "floor": self.config.learn_floor,
            "window": self.config.learn_window,
            "kinds": kinds,
            "counts": dict(self.counts),
            "moves": list(reversed(self.moves)),
            "pending": self._queue.qsize() if self._queue is not None else 0,
        }


def choose_looser(
    labels: list[Label], base: tuple[float, float], grid: list[tuple[float, float]], bound: float
) -> tuple[float, float] | None:
    """The module docstring's rule: the grid point at or below ``base`` whose added region R holds the
    most right answers with R's wrong share bounded (upper(k, m) <= bound); None when no point qualifies.

    Counted at once for every point: the labels are binned on the grid's cosine and score values and a
    two-way suffix sum gives each point's served count; R's count is that minus base's (a point at or
    below base on both thresholds serves everything base does). Bounds are computed best-first and only
    for points that could pass, so a refit over a window of thousands of labels takes milliseconds."""
    if not labels or not grid:
        return None
    sim = np.fromiter((lb.similarity for lb in labels), np.float64, len(labels))
    score = np.fromiter((lb.score for lb in labels), np.float64, len(labels))
    right = np.fromiter((lb.agree for lb in labels), bool, len(labels))
    t0, c0 = base
    cos_vals = np.unique(np.array([t for t, _ in grid], np.float64))
    sc_vals = np.unique(np.array([c for _, c in grid], np.float64))
    ti = np.searchsorted(cos_vals, sim, side="right") - 1  # the highest grid cosine a label reaches
    ci = np.searchsorted(sc_vals, score, side="right") - 1
    on = (ti >= 0) & (ci >= 0)
    shape = (len(cos_vals), len(sc_vals))
    every, good = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    np.add.at(every, (ti[on], ci[on]), 1)
    np.add.at(good, (ti[on & right], ci[on & right]), 1)

    def suffix(h):
        return h[::-1, ::-1].cumsum(0).cumsum(1)[::-1, ::-1]

    served, served_good = suffix(every), suffix(good)
    at_base = (sim >= t0) & (score >= c0)
    base_all, base_good = int(at_base.sum()), int((at_base & right).sum())
    least = _least_labels(bound)  # fewer labels than this cannot pass even with none wrong
    points = []
    for t, c in set(grid):
        if t > t0 or c > c0 or (t, c) == (t0, c0):
            continue
        i, j = int(np.searchsorted(cos_vals, t)), int(np.searchsorted(sc_vals, c))
        m = int(served[i, j]) - base_all
        g = int(served_good[i, j]) - base_good
        if m >= least and g > 0 and (m - g) <= bound * m:
            points.append((g, t, c, m))
    for g, t, c, m in sorted(points, reverse=True):  # the most right answers first; ties: the stricter
        if upper(m - g, m) <= bound:
            return t, c
    return None


def _least_labels(bound: float) -> int:
    """The smallest m with upper(0, m) <= bound (about 3 / bound)."""
    m = 1
    while upper(0, m) > bound:
        m = max(m + 1, int(m * 1.1))
    while m > 1 and upper(0, m - 1) <= bound:
        m -= 1
    return m
