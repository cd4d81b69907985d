"""The recording format, written and read in one place: the traffic-shape recorder, and what a replay reads.

What ``python -m gateway.advise --replay`` replays, never what was said.

Opt-in (``record: {path: ..., max_requests: 10000}`` in configs/gateway.yaml). One JSON line per answered
request, appended as it settles:

    {"t": 12.345, "tier": "small", "prompt_tokens": 412, "output_tokens": 37, "blocks": [0, 1, 5],
     "cache": "miss", "stream": true, "max_tokens": 256, "asked": 17, "lookup": "miss", "similarity": 0.8123}

``t`` is seconds since the recording started; ``blocks`` numbers the prompt's full KV blocks (16 tokens)
by the prefix they end: two requests share ``blocks[:k]`` exactly when their first 16k tokens are the
same, which is all a replay needs to rebuild the prefix sharing (with tokens of its own). Token ids and
texts are never written; the numbering lives in this process only. A cache hit has no blocks (no prompt
was encoded). ``asked`` numbers what the request asked (its repeat digest: tenant, tier, messages,
parameters), so two lines with the same number asked the same: what a replay with an exact cache answers
from it (``python -m gateway.advise --replay ... --try cache=exact``); null for requests that did not
reach a model. ``lookup`` is the semantic cache's verdict (exact, semantic, guard_rejected, miss, bypass,
error; null with no cache) and ``similarity`` the best cosine it saw: what ``--try cache_threshold=T``
re-decides (``cache_outcome``).
After ``max_requests`` lines the recorder stops (logged once): the file stays bounded.

Reading: ``load`` (the lines in arrival order), ``prompt_of`` (tokens with the recorded prefix sharing: block
number b is always the same 16 tokens) and ``cache_outcome`` (a recorded lookup re-decided at a threshold).
The recorder runs on the gateway's event loop (``record`` is a short locked append); the readers run in
``python -m gateway.advise``.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from pathlib import Path

log = logging.getLogger("gateway.advise.recording")
BLOCK = 16  # tokens per block, the engines' default block size


class Recorder:
    def __init__(self, path: str | Path, *, max_requests: int = 10000, clock=time.perf_counter):
        if max_requests < 1:
            raise ValueError(f"record.max_requests must be >= 1, got {max_requests}")
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_requests, self.clock = max_requests, clock
        self.t0 = clock()
        self.count = 0
        self._blocks: dict[int, int] = {}  # hash of a prefix ending a block -> its number
        self._asked: dict[bytes, int] = {}  # repeat digest -> its number
        self._lock = threading.Lock()
        self._file = self.path.open("a", encoding="utf-8")

    def blocks(self, prompt_ids: list[int] | None) -> list[int]:
        """Numbers of the prompt's full blocks, by the prefix each ends (no token id is kept)."""
        if not prompt_ids:
            return []
        out, h = [], 0
        for end in range(BLOCK, len(prompt_ids) + 1, BLOCK):
            h = hash((h, tuple(prompt_ids[end - BLOCK : end])))
            out.append(self._blocks.setdefault(h, len(self._blocks)))
        return out

    def record(
        self,
        *,
        arrived: float,
        tier: str,
        prompt_tokens: int,
        output_tokens: int,
        prompt_ids: list[int] | None,
        cache: str,
        stream: bool,
        max_tokens: int | None,
        asked: bytes | None = None,
        lookup: str | None = None,
        similarity: float | None = None,
    ) -> None:
        with self._lock:
            if self.count >= self.max_requests:
                if self.count == self.max_requests:
                    log.warning("recorder: %d requests recorded in %s; stopping", self.count, self.path)
                    self.count += 1
                return
            line = {
                "t": round(arrived - self.t0, 4),
                "tier": tier,
                "prompt_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "blocks": self.blocks(prompt_ids),
                "cache": cache,
                "stream": stream,
                "max_tokens": max_tokens,
                "asked": None if asked is None else self._asked.setdefault(asked, len(self._asked)),
                "lookup": lookup,
                "similarity": None if similarity is None else round(similarity, 4),
            }
            self._file.write(json.dumps(line) + "\n")
            self._file.flush()
            self.count += 1

    def close(self) -> None:
        with self._lock:
            self._file.close()


def load(path: str | Path, *, reached_a_model: bool = True) -> list[dict]:
    """A recording's lines, in arrival order; by default only the requests that reached a model (not
    answered from the cache, with a prompt), which are what a replay sends."""
    lines = [json.loads(x) for x in Path(path).expanduser().read_text().splitlines() if x.strip()]
    if reached_a_model:
        lines = [r for r in lines if r.get("cache") != "hit" and r.get("prompt_tokens", 0) > 0]
    return sorted(lines, key=lambda r: r["t"])


def prompt_of(shape: dict, index: int, vocab: int) -> list[int]:
    """Tokens with the recorded prefix sharing: block number b is always the same 16 tokens."""
    ids: list[int] = []
    for b in shape.get("blocks", ()):
        ids += random.Random(b * 7919 + 1).choices(range(100, vocab - 100), k=BLOCK)
    rest = shape["prompt_tokens"] - len(ids)
    if rest > 0:
        ids += random.Random(-1 - index).choices(range(100, vocab - 100), k=rest)
    return ids[: shape["prompt_tokens"]]


def cache_outcome(shape: dict, threshold: float | None) -> str:
    """A recorded line at cosine threshold ``threshold`` (None: as recorded): "hit", "unchecked" (a hit
    only the threshold decided, which the precision checker never read) or "miss"."""
    if threshold is None:
        return "hit" if shape.get("cache") == "hit" else "miss"
    lookup, sim = shape.get("lookup"), shape.get("similarity")
    if lookup == "exact":
        return "hit"
    if lookup == "semantic":
        return "hit" if sim is not None and sim >= threshold else "miss"
    if lookup == "miss" and sim is not None and sim >= threshold:
        return "unchecked"
    return "miss"  # refused by the checker (its verdict stands), bypassed, failed, or below T
