"""The KV block pool: every page of the device KV cache as a host-side ``KVBlock``, and the free ones in
LRU order.

Data flow: ``KVCacheManager`` (runtime/core/kv_cache_manager.py, on the engine's step-loop thread) takes
blocks from ``BlockPool.get_new_blocks`` for a request's new tokens, shares prefix-cache hits with
``touch`` and returns a finished request's blocks with ``free_blocks``. A block's id is its index in the
device KV arrays (the model runner's pages); nothing here touches those arrays.

Pure Python, no JAX or NumPy: the exact block ids and the eviction order are unit-tested with no model.
"""

from __future__ import annotations

from collections.abc import Iterable

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
            raise ValueError(f"num_blocks must be >= 2 (block 0 is the null block), got {num_blocks}")
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

    def reset_prefix_cache(self) -> bool:
        """Forget every cached prefix (the blocks' KV is about to be overwritten, e.g. by scoring); only
        while no block is in use. Returns False, changing nothing, if a block is still referenced."""
        if self.num_free_blocks != self.num_usable_blocks:
            return False
        for block in self.cached.values():
            block.block_hash = None
        self.cached.clear()
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
