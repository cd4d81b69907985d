"""``ReplicaSet``: data-parallel replicas of one tier (runtime servers of the same model) as one backend.

A tier with ``urls: [...]`` in ``configs/tiers.yaml`` is served by several ``python -m runtime.server``
processes; the gateway sees one backend with the interface of ``gateway.backends`` (ready,
max_model_len, start/close, encode, generate, stats), so the router, the fallback chain, budgets and
the cache treat the set as one tier.

Data flow (event loop only; each replica is a ``RemoteBackend`` polling its server's /v1/stats every
second):

    generate()  choose the least-loaded live replica -> its ``generate``; outputs pass through tagged
                with ``replica`` (the ``x-served-by-replica`` header). A replica that fails
                before its first output (refused, 503 overloaded / warming up, broken) is skipped and
                the next least-loaded one is tried. One that breaks mid-answer is resumed on another:
                the prompt plus the tokens generated so far go to the next replica with the remaining
                ``max_tokens``, and the caller sees one answer (usage counts the original prompt and
                every generated token).
    encode()    the least-loaded live replica (tokenization is the same on all of them), skipping
                replicas that cannot be reached.

Load of a replica, as this gateway estimates it::

    load = max(0, polled - ours_at_poll) + ours_now
           \\_______________________/     \\______/
            other gateways' requests      requests this gateway has on it right now
            (running + waiting at the     (exact, updated at dispatch and completion)
            last poll, less this
            gateway's share then)

The poll is up to a second old; subtracting what this gateway had in flight at that poll and adding
what it has now keeps a burst from one gateway spreading evenly instead of piling onto the replica
that looked idle a second ago. Ties go round-robin: the first tied replica at or after a cursor that
moves past every choice. Replicas that are not ready (their poll failed, or a request could not
connect) are skipped until a poll sees them again.

Limits: a resumed answer's stop strings are checked by the new replica on its own text only, so a
stop string split across the failure point is missed; a seeded sampled answer continues with a
different random stream. ``capacity`` in tiers.yaml stays the tier's (all replicas together).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from gateway.backends import BackendError
from runtime.api import EngineStats, RequestOutput, SamplingParams

log = logging.getLogger("gateway.replicas")


@dataclass
class Replica:
    """One runtime server of the set and this gateway's bookkeeping about it."""

    label: str  # host:port, the metrics label and x-served-by-replica value
    backend: object  # RemoteBackend (or anything with the backend interface)
    inflight: int = 0  # requests this gateway has on the replica now
    inflight_at_poll: int = 0  # ... when its stats were last polled
    dispatched: int = 0  # requests (and resumptions) sent to it
    failovers: int = 0  # requests moved off it (before or during the answer)
    resumes: int = 0  # of which broke off mid-answer and were resumed on another replica

    @property
    def ready(self) -> bool:
        return bool(self.backend.ready)

    def load(self) -> int:
        s = self.backend.stats()
        others = max(0, s.num_running + s.num_waiting - self.inflight_at_poll)
        return others + self.inflight


def choose(replicas: Sequence[Replica], cursor: int, exclude: frozenset[int] = frozenset()) -> int | None:
    """The index of the least-loaded ready replica not in ``exclude``; ties: the first at or after
    ``cursor`` (circularly). None when none is ready."""
    n = len(replicas)
    best, best_load = None, None
    for k in range(n):
        i = (cursor + k) % n
        r = replicas[i]
        if i in exclude or not r.ready:
            continue
        load = r.load()
        if best_load is None or load < best_load:
            best, best_load = i, load
    return best


def replica_label(url: str) -> str:
    u = urlparse(url)
    return u.netloc or url


class ReplicaSet:
    """One tier's replicas behind the backend interface; ``labels`` default to the backends' urls."""

    def __init__(self, name: str, backends: Sequence[object], labels: Sequence[str] | None = None):
        if not backends:
            raise ValueError(f"{name}: a replica set needs at least one replica")
        labels = list(labels) if labels is not None else [getattr(b, "url", f"r{i}") for i, b in enumerate(backends)]
        self.name = name
        self.replicas = [Replica(replica_label(label), b) for label, b in zip(labels, backends)]
        self._cursor = 0
        for i, b in enumerate(backends):
            if hasattr(b, "on_poll"):
                b.on_poll = self._poll_hook(i)

    @classmethod
    def from_urls(cls, name: str, urls: Sequence[str], **remote_kwargs) -> ReplicaSet:
        from gateway.backends.remote import RemoteBackend

        return cls(name, [RemoteBackend(f"{name}@{replica_label(u)}", u, **remote_kwargs) for u in urls], list(urls))

    def __repr__(self) -> str:
        return f"ReplicaSet({self.name!r}, {[(r.label, r.ready) for r in self.replicas]})"

    def _poll_hook(self, i: int):
        def polled() -> None:
            self.replicas[i].inflight_at_poll = self.replicas[i].inflight

        return polled

    # ------------------------------------------------------------ the backend interface

    @property
    def ready(self) -> bool:
        return any(r.ready for r in self.replicas)

    @property
    def compiling(self) -> bool:
        """Nothing compiles here: each replica's runtime server says what it is compiling."""
        return False

    @property
    def max_model_len(self) -> int:
        """The smallest context among live replicas (a request must fit wherever it lands)."""
        lens = [r.backend.max_model_len for r in self.replicas if r.ready and r.backend.max_model_len]
        return min(lens) if lens else 0

    async def start(self, warmup: bool = True) -> None:
        """Start every replica's backend together (a replica that is down costs one connect timeout)."""
        await asyncio.gather(*(r.backend.start(warmup=warmup) for r in self.replicas))

    async def close(self) -> None:
        await asyncio.gather(*(r.backend.close() for r in self.replicas), return_exceptions=True)

    def stats(self) -> EngineStats:
        """The replicas' engines summed (KV usage: their mean), from their last polls."""
        all_stats = [r.backend.stats() for r in self.replicas]
        summed = {f: sum(getattr(s, f) for s in all_stats) for f in EngineStats.__dataclass_fields__}
        summed["kv_cache_usage"] = summed["kv_cache_usage"] / len(all_stats)
        summed["weight_bytes"] = summed["weight_bytes"] // len(all_stats)  # each replica holds a copy
        summed["weight_bits"] = max(s.weight_bits for s in all_stats)
        summed["max_num_batched_tokens"] = max(s.max_num_batched_tokens for s in all_stats)  # a setting, not a count
        return EngineStats(**summed)

    def replica_stats(self) -> list[dict]:
        """Per replica, for metrics: label, up, load, in flight here, dispatched, failovers, resumes."""
        return [
            {
                "replica": r.label,
                "up": r.ready,
                "load": r.load(),
                "inflight": r.inflight,
                "dispatched": r.dispatched,
                "failovers": r.failovers,
                "resumes": r.resumes,
            }
            for r in self.replicas
        ]

    def pick(self, exclude: frozenset[int] = frozenset()) -> int | None:
        """Choose a replica and move the round-robin cursor past it."""
        i = choose(self.replicas, self._cursor, exclude)
        if i is not None:
            self._cursor = (i + 1) % len(self.replicas)
        return i

    async def encode(self, messages: Sequence[dict] | str, assistant_prefix: str = "") -> list[int]:
        tried: set[int] = set()
        last: BackendError | None = None
        while (i := choose(self.replicas, self._cursor, frozenset(tried))) is not None:
            try:
                return await self.replicas[i].backend.encode(messages, assistant_prefix)
            except BackendError as exc:  # RequestError (a bad request) is the same everywhere: raised
                tried.add(i)
                last = exc
        raise last or BackendError("unavailable", f"{self.name}: no replica is ready")

    async def generate(
        self, prompt_ids: list[int], params: SamplingParams, request_id: str
    ) -> AsyncIterator[RequestOutput]:
        tried: set[int] = set()
        done_ids: list[int] = []  # generated by replicas that failed mid-answer
        last: BackendError | None = None
        while (i := self.pick(frozenset(tried))) is not None:
            rep = self.replicas[i]
            rep.inflight += 1
            rep.dispatched += 1
            new_ids: list[int] = []
            p = (
                params
                if not done_ids
                else dataclasses.replace(params, max_tokens=max(1, params.max_tokens - len(done_ids)))
            )
            rid = f"{request_id}-r{len(tried)}" if tried else request_id
            gen = rep.backend.generate(list(prompt_ids) + done_ids, p, rid)
            try:
                async with contextlib.aclosing(gen):
                    async for out in gen:
                        new_ids.extend(out.token_ids)
                        out.replica = rep.label
                        if done_ids and out.finished:  # usage of the whole answer, not of the resumption
                            out.prompt_tokens = len(prompt_ids)
                            out.completion_tokens += len(done_ids)
                        yield out
                        if out.finished:
                            return
                raise BackendError("failed", f"{rep.label}: the answer ended without finishing")
            except BackendError as exc:
                last = exc
                tried.add(i)
                rep.failovers += 1
                if new_ids and not getattr(rep.backend, "sends_token_ids", True):
                    raise  # tokens of an older server are placeholders: the chain handles it
                rep.resumes += bool(new_ids)
                done_ids.extend(new_ids)
                log.warning(
                    "tier %s: replica %s %s (%s)%s",
                    self.name,
                    rep.label,
                    exc.cause,
                    exc,
                    f"; resuming after {len(done_ids)} tokens" if done_ids else "; trying another replica",
                )
            finally:
                rep.inflight -= 1
        if last is not None:
            raise last
        raise BackendError("unavailable", f"{self.name}: no replica is ready")
