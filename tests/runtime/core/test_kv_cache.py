"""Block pool and KV cache manager: exact block ids, reuse order and reference counts, no model."""

from __future__ import annotations

import pytest

from runtime.api import SamplingParams
from runtime.core.block_pool import NULL_BLOCK_ID, BlockPool, FreeBlockQueue, KVBlock
from runtime.core.kv_cache_manager import KVCacheManager
from runtime.core.request import Request


def ids(blocks):
    return [b.block_id for b in blocks]


def make_request(req_id: str, num_prompt: int, num_computed: int = 0) -> Request:
    req = Request(req_id, list(range(num_prompt)), SamplingParams(max_tokens=4))
    req.num_computed_tokens = num_computed
    return req


# ---- FreeBlockQueue -----------------------------------------------------------------------------


def test_free_queue_popleft_append_and_remove_from_middle():
    blocks = [KVBlock(i) for i in range(5)]
    q = FreeBlockQueue(blocks)
    assert len(q) == 5 and q.block_ids() == [0, 1, 2, 3, 4]

    q.remove(blocks[2])  # middle
    assert q.block_ids() == [0, 1, 3, 4] and len(q) == 4
    assert blocks[2] not in q and blocks[3] in q
    assert blocks[2].prev_free is None and blocks[2].next_free is None

    assert q.popleft() is blocks[0]
    q.remove(blocks[4])  # last
    q.append(blocks[2])
    q.append(blocks[0])
    assert q.block_ids() == [1, 3, 2, 0]
    assert ids(q.popleft_n(3)) == [1, 3, 2]
    assert q.block_ids() == [0]
    q.remove(blocks[0])  # the only one
    assert len(q) == 0 and q.block_ids() == []


def test_free_queue_errors():
    b = KVBlock(7)
    q = FreeBlockQueue()
    with pytest.raises(IndexError):
        q.popleft()
    with pytest.raises(ValueError, match="not in the free queue"):
        q.remove(b)
    q.append(b)
    with pytest.raises(ValueError, match="already in the free queue"):
        q.append(b)
    with pytest.raises(IndexError):
        q.popleft_n(2)
    assert q.block_ids() == [7]  # a failed popleft_n takes nothing


# ---- BlockPool ----------------------------------------------------------------------------------


def test_pool_reserves_null_block_and_allocates_lowest_ids_first():
    pool = BlockPool(8)
    assert pool.null_block.block_id == NULL_BLOCK_ID == 0
    assert pool.num_free_blocks == 7 and pool.num_usable_blocks == 7
    assert pool.free_block_queue.block_ids() == [1, 2, 3, 4, 5, 6, 7]
    assert pool.usage == 0.0

    a = pool.get_new_blocks(2)
    assert ids(a) == [1, 2]
    assert [b.ref_cnt for b in a] == [1, 1]
    b = pool.get_new_blocks(3)
    assert ids(b) == [3, 4, 5]
    assert pool.num_free_blocks == 2
    assert pool.usage == pytest.approx(5 / 7)
    assert pool.get_new_blocks(0) == []


def test_pool_frees_to_the_back_lru_order():
    pool = BlockPool(8)
    a = pool.get_new_blocks(2)  # [1, 2]
    b = pool.get_new_blocks(3)  # [3, 4, 5]
    pool.free_blocks(a)
    # 6, 7 were never used, so they come before the just-freed 1, 2.
    assert pool.free_block_queue.block_ids() == [6, 7, 1, 2]
    pool.free_blocks([b[2], b[0]])
    assert pool.free_block_queue.block_ids() == [6, 7, 1, 2, 5, 3]
    assert ids(pool.get_new_blocks(3)) == [6, 7, 1]
    assert pool.free_block_queue.block_ids() == [2, 5, 3]
    assert pool.null_block.ref_cnt == 0 and pool.null_block not in pool.free_block_queue


def test_pool_rejects_over_allocation_and_double_free():
    pool = BlockPool(4)
    blocks = pool.get_new_blocks(3)
    with pytest.raises(ValueError, match="only 0 free"):
        pool.get_new_blocks(1)
    pool.free_blocks(blocks[:1])
    with pytest.raises(ValueError, match="already free"):
        pool.free_blocks(blocks[:1])
    with pytest.raises(ValueError, match="null block"):
        pool.free_blocks([pool.null_block])
    with pytest.raises(ValueError, match=">= 2"):
        BlockPool(1)


def test_pool_ref_counts_with_shared_blocks():
    pool = BlockPool(6)
    a = pool.get_new_blocks(2)  # [1, 2]
    pool.touch(a[:1])  # a second owner for block 1
    assert [b.ref_cnt for b in a] == [2, 1]
    pool.free_blocks(a)
    # Block 1 is still held by its other owner; only block 2 is free.
    assert [b.ref_cnt for b in a] == [1, 0]
    assert pool.free_block_queue.block_ids() == [3, 4, 5, 2]
    pool.free_blocks(a[:1])
    assert pool.free_block_queue.block_ids() == [3, 4, 5, 2, 1]
    # Reviving a free block takes it out of the middle of the queue.
    pool.touch([a[1]])
    assert a[1].ref_cnt == 1
    assert pool.free_block_queue.block_ids() == [3, 4, 5, 1]
    with pytest.raises(ValueError, match="null block"):
        pool.touch([pool.null_block])


# ---- KVCacheManager ---------------------------------------------------------------------------


def test_manager_tables_grow_block_by_block():
    mgr = KVCacheManager(num_blocks=8, block_size=4, max_model_len=64)
    assert [mgr.num_blocks_needed(n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    req = make_request("a", 6)

    assert ids(mgr.allocate_slots(req, 6)) == [1, 2]  # tokens 0..5 -> 2 blocks
    assert mgr.get_block_ids("a") == [1, 2]
    req.num_computed_tokens = 6
    assert mgr.allocate_slots(req, 2) == []  # tokens 6, 7 fit in block 2
    req.num_computed_tokens = 8
    assert ids(mgr.allocate_slots(req, 1)) == [3]  # token 8 starts block 3
    assert mgr.get_block_ids("a") == [1, 2, 3]
    assert mgr.num_free_blocks == 4
    assert mgr.usage == pytest.approx(3 / 7)
    assert mgr.get_block_ids("unknown") == []


def test_manager_allocation_is_all_or_nothing():
    mgr = KVCacheManager(num_blocks=5, block_size=4, max_model_len=64)
    a, b = make_request("a", 8), make_request("b", 12)
    assert ids(mgr.allocate_slots(a, 8)) == [1, 2]
    assert mgr.allocate_slots(b, 12) is None  # needs 3, 2 free: takes none
    assert mgr.num_free_blocks == 2 and mgr.get_block_ids("b") == []
    assert ids(mgr.allocate_slots(b, 8)) == [3, 4]
    b.num_computed_tokens = 8
    assert mgr.allocate_slots(b, 1) is None
    assert mgr.get_block_ids("b") == [3, 4]


def test_manager_free_is_tail_first_and_idempotent():
    mgr = KVCacheManager(num_blocks=8, block_size=4, max_model_len=64)
    a, b = make_request("a", 12), make_request("b", 4)
    mgr.allocate_slots(a, 12)  # [1, 2, 3]
    mgr.allocate_slots(b, 4)  # [4]
    mgr.free(a)
    assert mgr.get_block_ids("a") == []
    assert mgr.block_pool.free_block_queue.block_ids() == [5, 6, 7, 3, 2, 1]
    mgr.free(a)  # a second free is a no-op
    assert mgr.num_free_blocks == 6
    # A request that never allocated can be freed too.
    mgr.free(make_request("c", 3))
    # The next allocation reuses the never-used blocks, then a's tail first.
    c = make_request("c", 20)
    assert ids(mgr.allocate_slots(c, 20)) == [5, 6, 7, 3, 2]
    mgr.free(b)
    mgr.free(c)
    assert mgr.num_free_blocks == 7


def test_manager_shares_computed_blocks_with_ref_counts():
    # The prefix-caching seam: today get_computed_blocks finds nothing...
    mgr = KVCacheManager(num_blocks=8, block_size=4, max_model_len=64)
    a, b = make_request("a", 10), make_request("b", 10)
    assert mgr.get_computed_blocks(b) == ([], 0)
    # ...but allocate_slots already shares blocks it is given, by reference count.
    mgr.allocate_slots(a, 10)  # [1, 2, 3]
    shared = mgr.req_to_blocks["a"][:2]
    new = mgr.allocate_slots(b, 2, new_computed_blocks=shared)  # 8 cached + 2 new tokens
    assert ids(new) == [4]
    assert mgr.get_block_ids("b") == [1, 2, 4]
    assert [blk.ref_cnt for blk in mgr.block_pool.blocks[:5]] == [0, 2, 2, 1, 1]
    mgr.free(a)
    assert mgr.block_pool.free_block_queue.block_ids() == [5, 6, 7, 3]
    mgr.free(b)
    assert mgr.block_pool.free_block_queue.block_ids() == [5, 6, 7, 3, 4, 2, 1]


def test_manager_rejects_bad_arguments():
    mgr = KVCacheManager(num_blocks=8, block_size=4, max_model_len=16)
    with pytest.raises(ValueError, match="max_model_len"):
        mgr.allocate_slots(make_request("a", 17), 17)
    with pytest.raises(ValueError, match=">= 0"):
        mgr.allocate_slots(make_request("a", 3), -1)
    with pytest.raises(ValueError, match="block_size"):
        KVCacheManager(num_blocks=8, block_size=0, max_model_len=16)


# ---- prefix caching -------------------------------------------------------------------------------


def run_prompt(mgr: KVCacheManager, req: Request) -> list[int]:
    """Admit ``req`` (with whatever the cache has), compute its whole prompt, register its blocks."""
    hits, n_cached = mgr.get_computed_blocks(req)
    assert mgr.allocate_slots(req, req.num_tokens - n_cached, hits) is not None
    req.num_computed_tokens = req.num_tokens
    mgr.cache_full_blocks(req)
    return mgr.get_block_ids(req.request_id)


def tokens_request(req_id: str, tokens: list[int]) -> Request:
    return Request(req_id, tokens, SamplingParams(max_tokens=4))


def test_prefix_hits_share_full_blocks_and_leave_the_last_token_to_compute():
    mgr = KVCacheManager(num_blocks=16, block_size=4, max_model_len=64, enable_caching=True)
    a = tokens_request("a", list(range(10)))  # blocks [0-3][4-7][8 9]: two full blocks cached
    assert run_prompt(mgr, a) == [1, 2, 3]
    assert len(mgr.block_pool.cached) == 2
    # same first 8 tokens, then different: both full blocks are hits, 8 tokens need no compute
    b = tokens_request("b", list(range(8)) + [50, 51, 52])
    assert mgr.get_computed_blocks(b) == ([mgr.block_pool.blocks[1], mgr.block_pool.blocks[2]], 8)
    assert run_prompt(mgr, b) == [1, 2, 4]
    assert mgr.block_pool.blocks[1].ref_cnt == 2 and mgr.block_pool.blocks[2].ref_cnt == 2
    # exactly a's first 8 tokens: only the first block counts, the last token must be computed
    c = tokens_request("c", list(range(8)))
    assert mgr.get_computed_blocks(c)[1] == 4
    # the same tokens in a different place of the prompt are a different prefix: no hit
    d = tokens_request("d", [99, 98, 97, 96] + list(range(4, 8)) + [1])
    assert mgr.get_computed_blocks(d) == ([], 0)
    # counters: tokens looked up at admission, and hits
    assert (mgr.prefix_cache_queries, mgr.prefix_cache_hits) == (10 + 11, 8)


def test_salt_and_caching_off():
    a = tokens_request("a", list(range(9)))
    b = tokens_request("b", list(range(9)))
    m1 = KVCacheManager(num_blocks=16, block_size=4, max_model_len=64, enable_caching=True, salt="model-a")
    run_prompt(m1, a)
    m2 = KVCacheManager(num_blocks=16, block_size=4, max_model_len=64, enable_caching=True, salt="model-b")
    run_prompt(m2, tokens_request("a", list(range(9))))
    assert set(m1.block_pool.cached).isdisjoint(m2.block_pool.cached)  # the salt is in every hash
    assert m1.get_computed_blocks(b)[1] == 8
    off = KVCacheManager(num_blocks=16, block_size=4, max_model_len=64)
    run_prompt(off, tokens_request("a", list(range(9))))
    assert off.get_computed_blocks(b) == ([], 0) and not off.block_pool.cached


def test_freed_cached_blocks_are_revived_or_evicted_lru():
    mgr = KVCacheManager(num_blocks=6, block_size=4, max_model_len=64, enable_caching=True)
    pool = mgr.block_pool
    a = tokens_request("a", list(range(9)))  # blocks 1, 2 cached, 3 partial
    run_prompt(mgr, a)
    mgr.free(a)  # tail first: free queue [4, 5, 3, 2, 1]
    assert pool.free_block_queue.block_ids() == [4, 5, 3, 2, 1] and len(pool.cached) == 2
    # a request with a's prefix revives blocks 1 and 2 from the middle of the free queue
    b = tokens_request("b", list(range(8)) + [7, 7, 7])
    assert run_prompt(mgr, b) == [1, 2, 4]
    assert pool.free_block_queue.block_ids() == [5, 3] and pool.num_evictions == 0
    mgr.free(b)  # queue [5, 3, 4, 2, 1]
    # a request of other tokens takes the front: 5, 3, 4 (uncached), then 2, evicting its prefix;
    # block 1 (the older half of the prefix, freed last) survives
    other = tokens_request("o", [100 + i for i in range(16)])
    assert run_prompt(mgr, other) == [5, 3, 4, 2]
    assert pool.num_evictions == 1
    assert [b.block_id for b in pool.cached.values()][:1] == [1]
    c = tokens_request("c", list(range(9)))
    assert mgr.get_computed_blocks(c)[1] == 4  # only the first block of the prefix is left


def test_reset_prefix_cache_forgets_prefixes_only_when_no_block_is_held():
    mgr = KVCacheManager(num_blocks=8, block_size=4, max_model_len=64, enable_caching=True)
    a = tokens_request("a", list(range(9)))
    run_prompt(mgr, a)
    assert not mgr.reset_prefix_cache() and len(mgr.block_pool.cached) == 2  # a holds its blocks: nothing changes
    mgr.free(a)
    assert mgr.reset_prefix_cache()
    assert not mgr.block_pool.cached and all(b.block_hash is None for b in mgr.block_pool.blocks)
    assert mgr.get_computed_blocks(tokens_request("b", list(range(9)))) == ([], 0)  # the prefix is gone
    assert mgr.block_pool.num_free_blocks == 7  # and every block is still free


@pytest.mark.parametrize("caching", [False, True])
def test_shared_prefixes_are_counted_with_caching_on_or_off(caching, monkeypatch):
    """The leading full blocks an earlier admission also began with: what a prefix cache could reuse."""
    mgr = KVCacheManager(num_blocks=32, block_size=4, max_model_len=64, enable_caching=caching)
    run_prompt(mgr, tokens_request("a", list(range(10))))  # first: nothing seen yet
    assert (mgr.shared_prefix_queries, mgr.shared_prefix_tokens) == (10, 0)
    run_prompt(mgr, tokens_request("b", list(range(8)) + [50, 51, 52]))  # a's two full blocks
    assert (mgr.shared_prefix_queries, mgr.shared_prefix_tokens) == (21, 8)
    # a's second block's tokens after another first block: a different prefix, no share
    run_prompt(mgr, tokens_request("c", [99, 98, 97, 96] + list(range(4, 8)) + [1]))
    assert mgr.shared_prefix_tokens == 8
    # the leading run only: block 0 matches, block 1 does not, block 2 (b's) would: 4 tokens shared
    run_prompt(mgr, tokens_request("d", list(range(4)) + [7, 7, 7, 7] + [50, 51, 52, 53]))
    assert (mgr.shared_prefix_queries, mgr.shared_prefix_tokens) == (21 + 9 + 12, 12)
    # an answer's blocks count once its request is freed: the next turn of a chat begins with them
    chat = tokens_request("g", [3, 1, 4, 1])
    run_prompt(mgr, chat)
    chat.output_token_ids.extend([5, 9, 2, 6])  # its answer (as the engine appends accepted tokens)
    mgr.free(chat)
    before = mgr.shared_prefix_tokens
    run_prompt(mgr, tokens_request("h", [3, 1, 4, 1] + chat.output_token_ids[:4] + [8]))
    assert mgr.shared_prefix_tokens - before == 8
    # bounded: past SEEN_PREFIXES hashes the oldest are forgotten
    monkeypatch.setattr(KVCacheManager, "SEEN_PREFIXES", 2)
    run_prompt(mgr, tokens_request("e", [5] * 12))  # three new hashes: only e's last two are kept
    assert len(mgr._seen) == 2
    before = mgr.shared_prefix_tokens
    run_prompt(mgr, tokens_request("f", list(range(8)) + [0]))  # a's prefix: forgotten
    assert mgr.shared_prefix_tokens == before
