"""Live verification: how often the cache is wrong on the traffic it actually serves.

A share of hits (``cache.verify_share``, and every one of a scope's first ``cache.verify_first`` hits) is
also answered by the model, in the background, after the hit has been sent: the request path only draws
a random number and, when it is chosen, hands the job to a bounded queue (a full queue drops the job and
counts it; nothing waits). A worker asks the routed tier for a fresh answer and compares it with the
served one (``answers_agree``). What it finds:

    agree      counted, nothing else
    disagree   counted; the entry is evicted; the disagreement is kept (tenant hashed) for the dashboard
               and the operator's "evict" action; and the scope's window of verified hits is checked
               against the bound: when its false-hit estimate crosses ``max_false_hit_rate`` (after at
               least ``verify_min_window`` verified hits), the scope's thresholds move one row stricter
               in the calibration table (``calibration.stricter``), as vCache's per-entry thresholds
               do, and the window starts over

``stats()`` gives, per kind of scope and tier, the verified count, the wrong count and the estimated
live false-hit rate with its two-sided 95% Clopper-Pearson interval, and each tightened scope with its
moves; ``/metrics`` exports them and the dashboard's Verification panel shows them.

The estimate is of the share of *served hits* that are wrong (what a user of the cache experiences),
not of the calibration's per-look-alike rate; with a sampled share it is unbiased for the hits served,
and the first-N rule over-samples new scopes (reported apart as ``first_hits``, so the estimate stays
the uniform sample's).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gateway.cache.calibration import interval, rows_for, stricter
from gateway.cache.checker import numbers_conflict
from gateway.cache.normalize import normalize_question

log = logging.getLogger(__name__)

EXACT_ONLY = (1.01, 1.01)  # thresholds no semantic candidate reaches
AnswerFn = Callable[[Any, str], Awaitable[str]]  # (the request, the tier) -> a fresh answer's text


def tenant_hash(tenant: str) -> str:
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:12]


async def answers_agree(
    embed: Callable[[str], Awaitable[np.ndarray]], threshold: float, served: str, fresh: str
) -> tuple[bool, float]:
    """Whether two answers are the same answer: the same text (normalized), or embeddings within
    ``threshold`` (``cache.verify_answer_threshold``) and no numbers in conflict (an amount, a date, a
    count). Live verification and the threshold learner both judge by it."""
    if normalize_question(served) == normalize_question(fresh):
        return True, 1.0
    if not served.strip() or not fresh.strip():
        return False, 0.0
    a, b = await embed(served[:1000]), await embed(fresh[:1000])
    cosine = float(np.dot(a, b))
    return cosine >= threshold and not numbers_conflict(served, fresh), cosine


@dataclass
class _Window:
    verified: int = 0
    wrong: int = 0


@dataclass
class ScopeState:
    kind: str
    tenant: str  # hashed
    tier: str
    hits_verified: int = 0  # all verified hits of this scope, first-N included
    window: _Window = field(default_factory=_Window)
    thresholds: tuple[float, float] | None = None  # None: the config's
    moves: list[dict] = field(default_factory=list)


@dataclass
class Job:
    scope_key: str
    kind: str
    tier: str
    tenant: str
    entry_id: str
    question: str
    served: str
    lookup: str  # "exact" | "semantic"
    similarity: float | None
    request: Any
    uniform: bool  # drawn by the share (False: a first-N verification)
    queued: float = 0.0
    score: float | None = None  # the checker's score of a semantic hit (exact hits: None)


class Verifier:
    """See the module docstring. ``answer_fn`` asks the model; ``embed`` gives unit vectors (the
    cache's embedder); ``evict`` removes an entry from the cache."""

    def __init__(
        self,
        config,
        *,
        answer_fn: AnswerFn,
        embed: Callable[[str], Awaitable[np.ndarray]],
        evict: Callable[[str], Awaitable[bool]],
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.config = config
        self.answer_fn, self.embed, self.evict = answer_fn, embed, evict
        self.rng = rng or random.Random()
        self.clock = clock
        self.scopes: dict[str, ScopeState] = {}
        self.counts: dict[tuple[str, str], _Window] = {}  # (kind, tier) -> uniform sample's counts
        self.first_counts: dict[tuple[str, str], _Window] = {}  # the first-N verifications
        self.disagreements: deque[dict] = deque(maxlen=50)
        self.dropped = 0
        self.failed = 0
        self.skipped_sampled = 0  # sampled hits left unverified (cache.verify_sampled: false)
        self._queue: asyncio.Queue[Job] | None = None
        self._workers: list[asyncio.Task] = []
        self._rows: dict[str, list] = {}
        # Every verdict as a label for the threshold learner: (kind, cosine, checker score, agree, source).
        self.on_label: Callable[[str, float, float, bool, str], None] | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._queue is not None:
            return
        self._queue = asyncio.Queue(maxsize=self.config.verify_max_pending)
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.config.verify_workers)]

    async def close(self) -> None:
        for w in self._workers:
            w.cancel()
        for w in self._workers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await w
        self._workers.clear()
        self._queue = None

    async def drain(self) -> None:
        """Wait until every queued verification is done (tests, benchmarks)."""
        if self._queue is not None:
            await self._queue.join()

    # -- the request path ---------------------------------------------------------------------------

    def thresholds(self, scope_key: str) -> tuple[float, float] | None:
        st = self.scopes.get(scope_key)
        return st.thresholds if st is not None else None

    def offer(self, job: Job, force: bool = False) -> bool:
        """Called on a hit, after the answer is known: verify it or not. Never blocks. ``force``: verify
        it whatever the draw (the learner's share of hits served by learned thresholds)."""
        if self._queue is None:
            return False
        st = self.scopes.get(job.scope_key)
        first = st is None or st.hits_verified < self.config.verify_first
        uniform = self.rng.random() < self.config.verify_share
        if not (first or uniform or force):
            return False
        if st is None:
            self.scopes[job.scope_key] = ScopeState(job.kind, tenant_hash(job.tenant), job.tier)
        job.uniform = uniform
        job.queued = self.clock()
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            self.dropped += 1
            return False
        self.scopes[job.scope_key].hits_verified += 1  # counted when queued, so first-N stays N
        return True

    # -- the worker ---------------------------------------------------------------------------------

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            job = await self._queue.get()
            try:
                await self._verify(job)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a failed verification is not a verdict: counted apart
                self.failed += 1
                log.warning("cache verification failed: %s: %s", type(exc).__name__, exc)
            finally:
                self._queue.task_done()

    async def _verify(self, job: Job) -> None:
        fresh = await self.answer_fn(job.request, job.tier)
        agree, cosine = await self.answers_agree(job.served, fresh)
        self.record(job, agree, fresh, cosine)

    async def answers_agree(self, served: str, fresh: str) -> tuple[bool, float]:
        return await answers_agree(self.embed, self.config.verify_answer_threshold, served, fresh)

    def record(self, job: Job, agree: bool, fresh: str = "", cosine: float | None = None) -> None:
        st = self.scopes.setdefault(job.scope_key, ScopeState(job.kind, tenant_hash(job.tenant), job.tier))
        table = self.counts if job.uniform else self.first_counts
        c = table.setdefault((job.kind, job.tier), _Window())
        c.verified += 1
        c.wrong += not agree
        st.window.verified += 1
        st.window.wrong += not agree
        self._maybe_tighten(job.scope_key, st)  # every verdict: the window may have just become long enough
        if self.on_label is not None:
            exact = job.lookup == "exact"
            self.on_label(
                job.kind,
                1.0 if exact or job.similarity is None else job.similarity,
                1.0 if exact or job.score is None else job.score,
                agree,
                "verified",
            )
        if agree:
            return
        self.disagreements.append(
            {
                "at": self.clock(),
                "tenant": st.tenant,
                "kind": job.kind,
                "tier": job.tier,
                "lookup": job.lookup,
                "similarity": job.similarity,
                "entry_id": job.entry_id,
                "question": job.question[:300],
                "served": job.served[:300],
                "fresh": fresh[:300],
                "answer_cosine": None if cosine is None else round(cosine, 4),
                "evicted": False,
            }
        )
        self._evict_soon(job.entry_id, self.disagreements[-1])

    def _evict_soon(self, entry_id: str, note: dict) -> None:
        async def go():
            with contextlib.suppress(Exception):
                note["evicted"] = bool(await self.evict(entry_id))

        with contextlib.suppress(RuntimeError):  # no running loop (a synchronous test): nothing to evict
            asyncio.get_running_loop().create_task(go())

    def _maybe_tighten(self, scope_key: str, st: ScopeState) -> None:
        bound = self.config.bounds()[st.kind]
        w = st.window
        if w.verified < self.config.verify_min_window or w.wrong / w.verified <= bound:
            return
        current = st.thresholds or self.config_thresholds(st.kind)
        if current == EXACT_ONLY:  # nothing stricter: the window starts over, the scope stays exact-only
            st.window = _Window()
            return
        rows = self._table_rows(st.kind)
        nxt = stricter(rows, current) if rows else None
        if nxt is None:  # the table's top: the scope serves exact hits only
            nxt = EXACT_ONLY
        st.moves.append(
            {
                "at": self.clock(),
                "from": list(current),
                "to": list(nxt),
                "window_verified": w.verified,
                "window_wrong": w.wrong,
            }
        )
        st.thresholds = nxt
        st.window = _Window()
        log.warning(
            "cache scope %s (tenant %s, %s): live false hits %d/%d over the bound %.3f; thresholds %s -> %s",
            scope_key[:12],
            st.tenant,
            st.kind,
            w.wrong,
            w.verified,
            bound,
            current,
            nxt,
        )

    def config_thresholds(self, kind: str) -> tuple[float, float]:
        c = self.config
        if kind == "conversation":
            return c.conversation_threshold, c.conversation_checker_threshold
        return c.threshold, c.checker_threshold

    def _table_rows(self, kind: str) -> list:
        if kind not in self._rows:
            from gateway.cache.calibration import DEFAULT_TABLE, CalibrationError, load_table

            try:
                table = load_table(self.config.calibration or str(DEFAULT_TABLE))
                self._rows[kind] = rows_for(table, self.config.checker if self.config.guard else "none", kind)
            except CalibrationError:
                self._rows[kind] = []
        return self._rows[kind]

    # -- reading ------------------------------------------------------------------------------------

    def estimates(self) -> list[dict]:
        """Per (kind, tier): the uniform sample's verified and wrong counts, the rate and its 95% CI."""
        out = []
        for (kind, tier), c in sorted(self.counts.items()):
            lo, hi = interval(c.wrong, c.verified)
            first = self.first_counts.get((kind, tier), _Window())
            out.append(
                {
                    "kind": kind,
                    "tier": tier,
                    "verified": c.verified,
                    "wrong": c.wrong,
                    "rate": c.wrong / c.verified if c.verified else None,
                    "ci95": [lo, hi],
                    "bound": self.config.bounds()[kind],
                    "first_hits": {"verified": first.verified, "wrong": first.wrong},
                }
            )
        for (kind, tier), first in sorted(self.first_counts.items()):
            if (kind, tier) not in self.counts:
                out.append(
                    {
                        "kind": kind,
                        "tier": tier,
                        "verified": 0,
                        "wrong": 0,
                        "rate": None,
                        "ci95": [0.0, 1.0],
                        "bound": self.config.bounds()[kind],
                        "first_hits": {"verified": first.verified, "wrong": first.wrong},
                    }
                )
        return out

    def stats(self) -> dict:
        tightened = [
            {
                "scope": key[:12],
                "tenant": st.tenant,
                "kind": st.kind,
                "tier": st.tier,
                "thresholds": list(st.thresholds) if st.thresholds else None,
                "moves": st.moves,
                "window": {"verified": st.window.verified, "wrong": st.window.wrong},
            }
            for key, st in self.scopes.items()
            if st.moves
        ]
        return {
            "share": self.config.verify_share,
            "first": self.config.verify_first,
            "estimates": self.estimates(),
            "tightened": tightened,
            "disagreements": list(reversed(self.disagreements)),
            "pending": self._queue.qsize() if self._queue is not None else 0,
            "dropped": self.dropped,
            "failed": self.failed,
            "skipped_sampled": self.skipped_sampled,
            "scopes": len(self.scopes),
        }
