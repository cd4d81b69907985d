"""Speculative decoding's draft side and its verification in the scheduler, with no model: drafts worked by
hand, then the scheduler against a fake runner whose "model" is a fixed token sequence."""

from __future__ import annotations

import pytest

from runtime.api import SamplingParams
from runtime.core.request import Request
from runtime.core.scheduler import Scheduler, SchedulerConfig
from runtime.core.speculative import Backoff, NgramIndex, NgramProposer, SpeculativeConfig, num_accepted


def test_ngram_lookup_by_hand():
    index = NgramIndex(n_min=2, n_max=3)
    #         0  1  2  3  4  5  6  7  8
    tokens = [5, 6, 7, 8, 9, 1, 5, 6, 7]
    # suffix (6, 7) ... (5, 6, 7) ended at 2 -> the tokens after it: 8, 9, 1
    assert index.propose(tokens, 3) == [8, 9, 1]
    # k larger than what follows: it stops at the end of the context
    assert NgramIndex(n_min=2, n_max=3).propose([1, 2, 3, 1, 2], 5) == [3, 1, 2]


def test_ngram_prefers_the_longest_then_the_latest_match():
    index = NgramIndex(n_min=1, n_max=3)
    # (2, 3) occurs at 1-2 (followed by 4) and 5-6 (followed by 9); (1, 2, 3) only at 0-2
    tokens = [1, 2, 3, 4, 0, 2, 3, 9, 1, 2, 3]
    assert index.propose(tokens, 1) == [4]  # the 3-gram wins over the later 2-gram
    index = NgramIndex(n_min=1, n_max=2)
    assert index.propose(tokens, 1) == [9]  # only 2-grams: the latest occurrence


def test_no_draft_without_a_match_or_from_the_suffix_itself():
    index = NgramIndex(n_min=2, n_max=4)
    assert index.propose([1, 2, 3, 4, 5], 3) == []
    assert index.propose([7, 7], 3) == []  # too short: the suffix is the whole context
    assert NgramIndex(2, 2).propose([7, 7, 7], 2) == [7]  # (7, 7) ended at 1, then 7


def test_the_index_grows_incrementally():
    index = NgramIndex(n_min=2, n_max=2)
    tokens = [1, 2, 3]
    assert index.propose(tokens, 2) == []
    assert index.indexed == 2
    tokens += [1, 2]
    assert index.propose(tokens, 2) == [3, 1]
    assert index.indexed == 4


def test_num_accepted():
    assert num_accepted([4, 5, 6], [4, 5, 6, 7]) == 3  # all kept, plus the token after them
    assert num_accepted([4, 5, 6], [4, 9, 6, 7]) == 1  # draft 2 was wrong: 9 was sampled there
    assert num_accepted([4, 5, 6], [3, 5, 6, 7]) == 0


def test_backoff_doubles_and_resets():
    b = Backoff(max_skip=4)
    assert b.allows()
    b.record(0)  # rejected: skip 1 step
    assert [b.allows() for _ in range(2)] == [False, True]
    b.record(0)  # again: skip 2
    assert [b.allows() for _ in range(3)] == [False, False, True]
    b.record(0)
    b.record(0)  # 4, then capped at 4
    assert b.skip == 4
    b.skip = 0
    b.record(2)  # kept drafts: no wait any more
    assert b.allows() and b.wait == 0


def test_config_is_checked():
    with pytest.raises(ValueError, match="prompt_lookup_min"):
        SpeculativeConfig(prompt_lookup_min=3, prompt_lookup_max=2)
    with pytest.raises(ValueError, match="num_speculative_tokens"):
        SpeculativeConfig(num_speculative_tokens=0)


# ---- the scheduler verifying drafts against a "model" that always continues a fixed sequence


TRUTH = [10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13]


def truth_runner(out, wrong_at: set[int] = frozenset()):
    """The model's next token after position p is TRUTH[p + 1]... except at positions in ``wrong_at``,
    whose row "samples" 99. For a request with drafts, one token after each of its rows."""
    sampled = {}
    for r in out.sample_req_ids:
        start = out.num_computed_tokens[r]
        n = out.num_scheduled_tokens[r]
        draft = out.draft_token_ids.get(r, [])
        rows = range(start + n - 1 - len(draft), start + n)
        toks = [99 if p + 1 in wrong_at else TRUTH[p + 1] for p in rows]
        sampled[r] = toks if draft else toks[0]
    return sampled


def spec_scheduler(k=3, **kw):
    config = SchedulerConfig(
        max_num_batched_tokens=64,
        max_num_seqs=8,
        max_model_len=64,
        block_size=4,
        num_blocks=32,
        speculative=SpeculativeConfig(num_speculative_tokens=k, prompt_lookup_min=2, prompt_lookup_max=3),
        **kw,
    )
    return Scheduler(config)


def test_drafts_are_kept_while_they_match_and_the_kv_count_follows():
    s = spec_scheduler()
    req = Request("a", TRUTH[:8], SamplingParams(max_tokens=10))
    s.add_request(req)
    out = s.schedule()  # the prompt
    assert out.draft_token_ids == {}
    s.update_from_output(out, truth_runner(out))
    assert req.output_token_ids == [10]  # TRUTH[8]
    out = s.schedule()  # suffix (12, 13, 10) seen at 2-4 -> drafts 11, 12, 13
    assert out.draft_token_ids == {"a": [11, 12, 13]}
    assert out.token_ids["a"] == [10, 11, 12, 13] and out.num_scheduled_tokens["a"] == 4
    assert out.total_num_scheduled_tokens == 4
    (update,) = s.update_from_output(out, truth_runner(out))
    assert update.new_token_ids == (11, 12, 13, 10)  # three drafts kept + the token after them
    assert req.num_computed_tokens == req.num_tokens - 1 == 12
    assert s.proposer.num_draft_tokens == 3 and s.proposer.num_accepted_tokens == 3


def test_a_wrong_draft_is_replaced_by_what_was_sampled():
    s = spec_scheduler()
    req = Request("a", TRUTH[:8], SamplingParams(max_tokens=10))
    s.add_request(req)
    out = s.schedule()
    s.update_from_output(out, truth_runner(out))
    out = s.schedule()
    assert out.draft_token_ids["a"] == [11, 12, 13]
    # position 10 "samples" 99: draft 1 (11 at 9) is kept, draft 2 (12 at 10) is not, 99 replaces it
    (update,) = s.update_from_output(out, truth_runner(out, wrong_at={10}))
    assert update.new_token_ids == (11, 99)
    assert req.output_token_ids == [10, 11, 99]
    assert req.num_computed_tokens == req.num_tokens - 1 == 10  # the rows fed 12 and 13 do not count


def test_drafts_never_pass_max_tokens():
    s = spec_scheduler(k=5)
    req = Request("a", TRUTH[:8], SamplingParams(max_tokens=3))
    s.add_request(req)
    out = s.schedule()
    s.update_from_output(out, truth_runner(out))
    out = s.schedule()
    assert out.draft_token_ids["a"] == [11]  # 2 tokens left: one draft + the token after it
    (update,) = s.update_from_output(out, truth_runner(out))
    assert update.finish_reason == "length" and req.num_output_tokens == 3
    assert s.kv_cache_manager.num_free_blocks == 31


def test_an_end_token_inside_the_kept_tokens_ends_the_request_there():
    s = spec_scheduler()
    req = Request("a", TRUTH[:8], SamplingParams(max_tokens=10), eos_token_ids={12})
    s.add_request(req)
    out = s.schedule()
    s.update_from_output(out, truth_runner(out))
    out = s.schedule()
    (update,) = s.update_from_output(out, truth_runner(out))
    assert update.new_token_ids == (11, 12) and update.finish_reason == "stop"
    assert not s.has_unfinished_requests()


def test_drafts_take_only_the_seats_and_budget_left():
    s = spec_scheduler(k=3)
    for i in range(7):
        s.add_request(Request(f"r{i}", TRUTH[:8], SamplingParams(max_tokens=10)))
    out = s.schedule()
    s.update_from_output(out, truth_runner(out))
    out = s.schedule()
    # 7 decoding requests on 8 sampled rows: one draft in all
    assert sum(len(d) for d in out.draft_token_ids.values()) == 1
    assert out.total_num_scheduled_tokens == 8


def test_no_drafts_without_the_config():
    s = Scheduler(
        SchedulerConfig(max_num_batched_tokens=64, max_num_seqs=8, max_model_len=64, block_size=4, num_blocks=32)
    )
    req = Request("a", TRUTH[:8], SamplingParams(max_tokens=10))
    s.add_request(req)
    for _ in range(3):
        out = s.schedule()
        assert out.draft_token_ids == {}
        s.update_from_output(out, truth_runner(out))
    assert req.output_token_ids == TRUTH[8:11]


def test_proposer_pauses_a_request_whose_drafts_fail():
    p = NgramProposer(SpeculativeConfig(num_speculative_tokens=2, prompt_lookup_min=1, prompt_lookup_max=1))
    tokens = [1, 2, 1]
    assert p.propose("a", tokens, 2) == [2, 1]
    p.record("a", 2, 0)
    assert p.propose("a", tokens, 2) == []  # paused one step
    assert p.propose("a", tokens, 2) == [2, 1]
    p.forget("a")
    assert p.propose("a", tokens, 2) == [2, 1]
