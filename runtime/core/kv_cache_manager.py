"""Paged KV cache bookkeeping on the host: a pool of fixed-size blocks and per-request block tables.

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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runtime.core.request import Request

NULL_BLOCK_ID = 0


class KVBlock:
    """One page of the KV cache. ``block_id`` indexes the device KV arrays and never changes.

    ``ref_cnt`` counts the requests whose block tables hold this block (more than one once prefix
    caching shares blocks). ``prev_free``/``next_free`` link it into the ``FreeBlockQueue`` while
    ``ref_cnt`` is 0 and are None otherwise. ``block_hash`` is set while the block is a prefix-cache
    entry (full, its KV computed): it stays set in the free queue, so a later request can revive
    the block, until the block is handed out again for other tokens (evicted, LRU).
    """

    __slots__ = ("block_id", "ref_cnt", "prev_free", "next_free", "block_hash")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_cnt = 0
        self.prev_free: KVBlock | None = None
        self.next_free: KVBlock | None = None
        self.block_hash: int | None = None

    def __repr__(self) -> str:
        return f"KVBlock(id={self.block_id}, ref_cnt={self.ref_cnt})"


class FreeBlockQueue:
    """The free blocks in eviction order: allocate from the front, return freed blocks to the back.

    Why a doubly linked list threaded through the ``KVBlock`` objects themselves, rather than a
    ``deque`` of ids: every operation the pool needs is O(1) and allocation-free.

    - ``popleft``: allocate the block that has been free the longest (least recently used).
    - ``append``: a freed block goes to the back, so it is reused last.
    - ``remove``: take a block out of the *middle*. Prefix caching needs this: a free block may
      still hold a cached prefix, and when a new request hits that prefix the block is revived in
      place (``BlockPool.touch``). A ``deque`` would make that O(n); a dict-ordered set cannot
      both pop from the front and delete by key without extra bookkeeping.

    Why block ids are stable: a block's id is its index in the device KV arrays, fixed at start-up.
    The queue moves ``KVBlock`` objects, never renumbers them, so a block table written into a step
    stays valid however the free list is reshuffled, and the LRU order is reproducible in tests.

    Two sentinels keep the pointer updates free of edge cases::

        head <-> [b3] <-> [b1] <-> [b4] <-> tail
                  ^ popleft()                ^ append(b) links b in just before tail
        remove(b1):  b3.next_free = b4; b4.prev_free = b3; b1's pointers cleared
    """

    def __init__(self, blocks: Iterable[KVBlock] = ()) -> None:
        self._head = KVBlock(-1)
        self._tail = KVBlock(-1)
        self._head.next_free = self._tail
        self._tail.prev_free = self._head
        self._len = 0
        for block in blocks:
            self.append(block)

    def __len__(self) -> int:
        return self._len

    def popleft(self) -> KVBlock:
        if self._len == 0:
            raise IndexError("popleft from an empty FreeBlockQueue")
        block = self._head.next_free
        assert block is not None
        self.remove(block)
        return block

    def popleft_n(self, n: int) -> list[KVBlock]:
        if n > self._len:
            raise IndexError(f"asked for {n} blocks, only {self._len} free")
        return [self.popleft() for _ in range(n)]

    def append(self, block: KVBlock) -> None:
        if block.prev_free is not None or block.next_free is not None:
            raise ValueError(f"{block} is already in the free queue")
        last = self._tail.prev_free
        assert last is not None
        last.next_free = block
        block.prev_free = last
        block.next_free = self._tail
        self._tail.prev_free = block
        self._len += 1

    def remove(self, block: KVBlock) -> None:
        prev, nxt = block.prev_free, block.next_free
        if prev is None or nxt is None:
            raise ValueError(f"{block} is not in the free queue")
        prev.next_free = nxt
        nxt.prev_free = prev
        block.prev_free = block.next_free = None
        self._len -= 1

    def __contains__(self, block: KVBlock) -> bool:
        return block.prev_free is not None

    def block_ids(self) -> list[int]:
        """Free block ids from the front (next to allocate) to the back. O(n): tests, debugging."""
        ids = []
        node = self._head.next_free
        while node is not self._tail:
            assert node is not None
            ids.append(node.block_id)
            node = node.next_free
        return ids


class BlockPool:
    """All ``num_blocks`` KV blocks; block 0 is the null block and is never handed out.

    The null block is the padding entry of block tables (the runner's page-index array has a fixed
    width), so a kernel reading past a request's last page reads block 0, which nobody writes to.
    Initially the free queue holds blocks 1..num_blocks-1 in id order, so the first allocation gets
    the lowest ids.
    """

    def __init__(self, num_blocks: int) -> None:
        if num_blocks < 2:
            raise ValueError(
                f"num_blocks must be >= 2 (block 0 is the null block), got {num_blocks}"
            )
        self.num_blocks = num_blocks
        self.blocks = [KVBlock(i) for i in range(num_blocks)]
        self.null_block = self.blocks[NULL_BLOCK_ID]
        self.free_block_queue = FreeBlockQueue(self.blocks[1:])
        self.cached: dict[int, KVBlock] = {}  # block hash -> the block holding that prefix's KV
        self.num_evictions = 0

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_queue)

    @property
    def num_usable_blocks(self) -> int:
        return self.num_blocks - 1

    @property
    def usage(self) -> float:
        """Fraction of the usable (non-null) blocks currently held by requests, in [0, 1]."""
        return 1.0 - self.num_free_blocks / self.num_usable_blocks

    def get_new_blocks(self, n: int) -> list[KVBlock]:
        """Take ``n`` blocks from the front of the free queue, each with ``ref_cnt`` 1."""
        if n < 0:
            raise ValueError(f"cannot allocate a negative number of blocks ({n})")
        if n > self.num_free_blocks:
            raise ValueError(f"asked for {n} blocks, only {self.num_free_blocks} free")
        blocks = self.free_block_queue.popleft_n(n)
        for block in blocks:
            assert block.ref_cnt == 0, block
            block.ref_cnt = 1
            if block.block_hash is not None:  # the least recently used cached prefix gives way
                del self.cached[block.block_hash]
                block.block_hash = None
                self.num_evictions += 1
        return blocks

    def cache(self, block: KVBlock, block_hash: int) -> bool:
        """Register a full, computed block under its hash. False if another block already holds
        that prefix (two requests computed it at once): this one stays private and is not shared."""
        if block.block_hash is not None or block_hash in self.cached:
            return False
        block.block_hash = block_hash
        self.cached[block_hash] = block
        return True

    def touch(self, blocks: Iterable[KVBlock]) -> None:
        """Add a reference to blocks that another request already filled (prefix-cache hits).

        A block at ``ref_cnt`` 0 is still in the free queue; it is revived by removing it from the
        middle of the queue in O(1).
        """
        for block in blocks:
            if block is self.null_block:
                raise ValueError("the null block cannot be shared")
            if block.ref_cnt == 0:
                self.free_block_queue.remove(block)
            block.ref_cnt += 1

    def free_blocks(self, blocks: Iterable[KVBlock]) -> None:
        """Drop one reference from each block; a block whose count reaches 0 joins the back of the
        free queue, in the order given. Freeing a block that is already free raises ValueError."""
        for block in blocks:
            if block is self.null_block:
                raise ValueError("the null block is never allocated and cannot be freed")
            if block.ref_cnt <= 0:
                raise ValueError(f"{block} is already free")
            block.ref_cnt -= 1
            if block.ref_cnt == 0:
                self.free_block_queue.append(block)


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
    """

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, *, enable_caching: bool = False,
                 salt: str = "") -> None:
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
        self,
        request: Request,
        num_new_tokens: int,
        new_computed_blocks: Sequence[KVBlock] = (),
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
                f"request {request.request_id!r}: {num_total} tokens exceed max_model_len "
                f"{self.max_model_len}"
            )
        table = self.req_to_blocks.get(request.request_id, [])
        if new_computed_blocks and table:
            raise ValueError(
                f"request {request.request_id!r}: computed blocks can only be shared on admission"
            )
        num_needed = self.num_blocks_needed(num_total) - len(table) - len(new_computed_blocks)
        # Reviving cached blocks that sit in the free queue also uses up free blocks.
        num_revived = sum(1 for b in new_computed_blocks if b.ref_cnt == 0)
        if max(num_needed, 0) + num_revived > self.block_pool.num_free_blocks:
            return None
        self.block_pool.touch(new_computed_blocks)
        new_blocks = self.block_pool.get_new_blocks(max(num_needed, 0))
        self.req_to_blocks[request.request_id] = [*table, *new_computed_blocks, *new_blocks]
        if self.enable_caching and not table:  # admission: count the lookup
            self.prefix_cache_queries += request.num_tokens
            self.prefix_cache_hits += num_cached
            self._req_num_cached[request.request_id] = len(new_computed_blocks)
        return new_blocks

    def free(self, request: Request) -> None:
        """Release all of ``request``'s blocks now. Safe to call twice (the second does nothing).

        Blocks are freed tail first, so a request's later blocks are reused before its first ones:
        with prefix caching, the start of a prompt is the part most likely to be shared again.
        """
        blocks = self.req_to_blocks.pop(request.request_id, None)
        self._req_hashes.pop(request.request_id, None)
        self._req_num_cached.pop(request.request_id, None)
        if blocks is not None:
            self.block_pool.free_blocks(reversed(blocks))

    def get_block_ids(self, request_id: str) -> list[int]:
        """A copy of the request's block table as ids ([] for a request holding no blocks)."""
        return [b.block_id for b in self.req_to_blocks.get(request_id, ())]
