"""Paged KV cache bookkeeping on the host: per-request block tables over a pool of fixed-size blocks.

Data flow: the scheduler (on the engine's step-loop thread) asks ``KVCacheManager.allocate_slots``
for room for the tokens it is about to schedule, and calls ``free`` when a request finishes, is
aborted or is preempted. The manager hands back block ids; the scheduler copies each request's
table into its ``SchedulerOutput`` and the model runner pads it with the null block (id 0) into
the page-index array of the jitted step. The device KV arrays themselves live with the model runner
(donated into every step); this module only decides which block ids a request's tokens go to.

Pure Python, no JAX or NumPy: its behaviour (exact block ids, reuse order) is unit-tested with no
model. Token ``t`` of a request lives in ``block_table[t // block_size]`` at offset
``t % block_size``::

    tokens      0 1 2 3 | 4 5 6 7 | 8 9        (block_size = 4, 10 tokens)
    block table [   7   ,    2    ,  5  ]      -> ceil(10 / 4) = 3 blocks, the last one half full
    padded      [7, 2, 5, 0, 0, ...]           (the runner pads with the null block 0)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from runtime.core.block_pool import BlockPool, KVBlock

if TYPE_CHECKING:
    from runtime.core.request import Request


class KVCacheManager:
    """Per-request block tables over one ``BlockPool``, with automatic prefix caching.

    A request's table only grows while it runs (blocks are appended as ``num_computed_tokens``
    advances) and is released as a whole by ``free``: on finish, abort or preemption.

    Prefix caching (``enable_caching``): once a block is full and its KV computed, it is registered
    under a hash of its tokens chained from the previous block's hash (and the ``salt``), so the hash
    names the whole prefix up to the block's end, not just its own tokens::

        tokens   [a b c d][e f g h][i j]        h0 = H(salt, (a,b,c,d))
        hashes     h0       h1      -           h1 = H(h0, (e,f,g,h))   the partial block: never cached

    A new request looks its full prompt blocks up in order and stops at the first miss; the hits
    are shared (``ref_cnt`` + 1, revived from the free queue if nobody holds them) and count as
    computed, so ``num_computed_tokens`` starts past them and the scheduler needs no other change.
    At least one token is always left to compute: its logits give the first output token. Freed
    blocks keep their hash in the free queue and are evicted least recently used first, when the
    pool hands them out again. Cache hits count tokens, as vLLM's ``prefix_cache_hits`` does.

    Shared prefixes are counted whether caching is on or not (what caching would save, and with it on,
    what eviction loses): at admission, the prompt's leading full blocks whose chained hash an earlier
    admission also had, among the last ``SEEN_PREFIXES`` block hashes seen (an LRU of ints, ~2 MB at
    most: the full blocks of each admitted prompt, and at ``free`` of its answer too, since the next turn
    of a chat begins with it). ``shared_prefix_tokens / shared_prefix_queries`` is the bottleneck
    advisor's shared-prefix share (gateway/advise/symptoms.py).
    """

    SEEN_PREFIXES = 32768

    def __init__(
        self, num_blocks: int, block_size: int, max_model_len: int, *, enable_caching: bool = False, salt: str = ""
    ) -> None:
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        if max_model_len < 1:
            raise ValueError(f"max_model_len must be >= 1, got {max_model_len}")
        self.block_pool = BlockPool(num_blocks)
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.req_to_blocks: dict[str, list[KVBlock]] = {}
        self.enable_caching = enable_caching
        self._salt = hash(("jaxserve-prefix", salt))
        self._req_hashes: dict[str, list[int]] = {}  # hashes of a request's full blocks, computed lazily
        self._req_num_cached: dict[str, int] = {}  # blocks of the request already registered
        self.prefix_cache_queries = 0  # prompt tokens looked up at admission
        self.prefix_cache_hits = 0  # of which found cached
        self._seen: OrderedDict[int, None] = OrderedDict()  # block hashes of recent prompts, oldest first
        self.shared_prefix_queries = 0  # tokens admitted (caching on or off)
        self.shared_prefix_tokens = 0  # of which in leading full blocks an earlier admission began with too

    @property
    def num_free_blocks(self) -> int:
        return self.block_pool.num_free_blocks

    @property
    def usage(self) -> float:
        return self.block_pool.usage

    def num_blocks_needed(self, num_tokens: int) -> int:
        """Blocks that hold ``num_tokens`` tokens: ceil(num_tokens / block_size)."""
        return -(-num_tokens // self.block_size)

    def get_computed_blocks(self, request: Request) -> tuple[list[KVBlock], int]:
        """Blocks whose KV for the start of ``request``'s tokens is already computed, and how many
        tokens they cover.

        Full blocks only, and never the block of the request's last token (its logits are needed).
        The scheduler passes the hits on to ``allocate_slots(..., new_computed_blocks=...)``, which
        shares them via ``BlockPool.touch``. Without caching: always ``([], 0)``.
        """
        if not self.enable_caching:
            return [], 0
        max_blocks = (request.num_tokens - 1) // self.block_size
        hits: list[KVBlock] = []
        for block_hash in self._hashes(request, max_blocks):
            block = self.block_pool.cached.get(block_hash)
            if block is None:
                break
            hits.append(block)
        return hits, len(hits) * self.block_size

    def _hashes(self, request: Request, n: int) -> list[int]:
        """Chained hashes of the request's first ``n`` full blocks (memoized: a prefix never changes)."""
        hashes = self._req_hashes.setdefault(request.request_id, [])
        bs = self.block_size
        for i in range(len(hashes), n):
            prev = hashes[i - 1] if i else self._salt
            hashes.append(hash((prev, tuple(request.token_slice(i * bs, (i + 1) * bs)))))
        return hashes[:n]

    def cache_full_blocks(self, request: Request) -> None:
        """Register the request's blocks that became full with computed KV (after a step)."""
        if not self.enable_caching:
            return
        n_full = request.num_computed_tokens // self.block_size
        start = self._req_num_cached.get(request.request_id, 0)
        if n_full <= start:
            return
        table = self.req_to_blocks.get(request.request_id, [])
        for block, block_hash in zip(table[start:n_full], self._hashes(request, n_full)[start:]):
            self.block_pool.cache(block, block_hash)
        self._req_num_cached[request.request_id] = n_full

    def allocate_slots(
        self, request: Request, num_new_tokens: int, new_computed_blocks: Sequence[KVBlock] = ()
    ) -> list[KVBlock] | None:
        """Make room for ``num_new_tokens`` more tokens after ``request.num_computed_tokens``.

        ``new_computed_blocks`` (from ``get_computed_blocks``, for a request being admitted) are
        shared onto the front of the table and count ``block_size`` computed tokens each.

        Returns the newly allocated blocks (possibly ``[]`` when the last block still has room), or
        None when the pool has too few free blocks: nothing is allocated then (all or nothing), and
        the caller preempts a request and retries.
        """
        if num_new_tokens < 0:
            raise ValueError(f"num_new_tokens must be >= 0, got {num_new_tokens}")
        num_cached = len(new_computed_blocks) * self.block_size
        num_total = request.num_computed_tokens + num_cached + num_new_tokens
        if num_total > self.max_model_len:
            raise ValueError(
                f"request {request.request_id!r}: {num_total} tokens exceed max_model_len {self.max_model_len}"
            )
        table = self.req_to_blocks.get(request.request_id, [])
        if new_computed_blocks and table:
            raise ValueError(f"request {request.request_id!r}: computed blocks can only be shared on admission")
        num_needed = self.num_blocks_needed(num_total) - len(table) - len(new_computed_blocks)
        # Reviving cached blocks that sit in the free queue also uses up free blocks.
        num_revived = sum(1 for b in new_computed_blocks if b.ref_cnt == 0)
        if max(num_needed, 0) + num_revived > self.block_pool.num_free_blocks:
            return None
        self.block_pool.touch(new_computed_blocks)
        new_blocks = self.block_pool.get_new_blocks(max(num_needed, 0))
        self.req_to_blocks[request.request_id] = [*table, *new_computed_blocks, *new_blocks]
        if not table:  # admission: count the lookup
            self._count_shared_prefix(request)
            if self.enable_caching:
                self.prefix_cache_queries += request.num_tokens
                self.prefix_cache_hits += num_cached
                self._req_num_cached[request.request_id] = len(new_computed_blocks)
        return new_blocks

    def _count_shared_prefix(self, request: Request) -> None:
        seen, shared = self._seen, 0
        hashes = self._hashes(request, request.num_tokens // self.block_size)
        for block_hash in hashes:  # the leading run: a hash names the whole prefix up to its block's end
            if block_hash not in seen:
                break
            shared += 1
        self._remember(hashes)
        self.shared_prefix_queries += request.num_tokens
        self.shared_prefix_tokens += shared * self.block_size

    def _remember(self, hashes: list[int]) -> None:
        seen = self._seen
        for block_hash in hashes:
            seen[block_hash] = None
            seen.move_to_end(block_hash)
        while len(seen) > self.SEEN_PREFIXES:
            seen.popitem(last=False)

    def free(self, request: Request) -> None:
        """Release all of ``request``'s blocks now. Safe to call twice (the second does nothing).

        Blocks are freed tail first, so a request's later blocks are reused before its first ones:
        with prefix caching, the start of a prompt is the part most likely to be shared again.
        """
        blocks = self.req_to_blocks.pop(request.request_id, None)
        if blocks is not None:  # its answer too is remembered: the next turn of a chat begins with it
            self._remember(self._hashes(request, request.num_tokens // self.block_size))
            self.block_pool.free_blocks(reversed(blocks))
        self._req_hashes.pop(request.request_id, None)
        self._req_num_cached.pop(request.request_id, None)

    def reset_prefix_cache(self) -> bool:
        """Forget every cached prefix; only with no request holding blocks (False, nothing changed, otherwise).
        The prefix counters and the remembered prefixes (shared-prefix statistics) stay."""
        if self.req_to_blocks:
            return False
        self._req_hashes.clear()
        self._req_num_cached.clear()
        return self.block_pool.reset_prefix_cache()

    def get_block_ids(self, request_id: str) -> list[int]:
        """A copy of the request's block table as ids ([] for a request holding no blocks)."""
        return [b.block_id for b in self.req_to_blocks.get(request_id, ())]
