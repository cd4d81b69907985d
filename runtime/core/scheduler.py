"""Continuous-batching scheduler: which requests run this step, and how many tokens each.

Who calls it: the ``LLMEngine`` step loop, on its own thread. Every method here must be called from
that thread (nothing is locked); requests arriving from the asyncio front are handed over to the
loop, which calls ``add_request`` / ``abort_request`` between steps. One step is::

    out = scheduler.schedule()                      # plain data: ids -> token counts, block tables
    sampled, logprobs = runner.execute(out)         # {req_id: token} for out.sample_req_ids only
    updates = scheduler.update_from_output(out, sampled)   # append tokens, stop checks, free KV

``schedule()`` and ``update_from_output()`` strictly alternate: ``num_computed_tokens`` only
advances when the step's result comes back.

The policy has one invariant instead of prefill and decode modes: each request's
``num_computed_tokens`` catches up with its ``num_tokens`` (prompt + outputs so far). A step gives a
request ``min(tokens still to compute, token budget left)`` tokens: a whole short prompt, a chunk of
a long one (chunked prefill), the rest of one, or the single token sampled last step (decode). The
step's logits yield a new token for a request only if the step brings it fully up to date; the
runner samples for exactly those (``SchedulerOutput.sample_req_ids``).

Order within a step: running requests first, in admission order, then waiting ones in arrival
order (FCFS) while the token budget, ``max_num_seqs`` and free KV blocks allow. When a running
request needs a block and none is free, the most recently admitted running request is preempted by
recompute: its KV is freed, its ``num_computed_tokens`` reset to 0 (its output tokens are kept) and
it goes to the front of the waiting queue. Nothing here imports JAX or NumPy.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from runtime.api import SamplingParams
from runtime.core.kv_cache_manager import KVCacheManager
from runtime.core.request import Request, RequestStatus
from runtime.core.speculative import NgramProposer, SpeculativeConfig, num_accepted


@dataclass(frozen=True)
class SchedulerConfig:
    """Limits of one engine's scheduler, validated once at start-up.

    - ``max_num_batched_tokens``: the token budget of one step (the flattened token axis).
    - ``max_num_seqs``: how many requests may be running (hold KV) at once.
    - ``max_model_len``: prompt + generated tokens of one request, at most.
    - ``block_size``, ``num_blocks``: the paged KV cache (block 0 is the null block).
    - ``enable_chunked_prefill``: split prompts longer than the budget left over several steps.
      Without it a prompt is scheduled whole or waits, so the budget must hold ``max_model_len``.
    - ``long_prefill_token_threshold``: cap on the tokens one request gets in one step, so a long
      prompt cannot crowd the other requests out of a step (needs chunked prefill).
    - ``enable_prefix_caching``: reuse the KV of full blocks whose tokens (and every token before
      them) match an earlier request's; ``prefix_cache_salt`` goes into every block hash.
    - ``speculative``: n-gram speculative decoding (runtime/core/speculative.py); None: off.
    """

    max_num_batched_tokens: int
    max_num_seqs: int
    max_model_len: int
    block_size: int
    num_blocks: int
    enable_chunked_prefill: bool = True
    long_prefill_token_threshold: int | None = None
    enable_prefix_caching: bool = False
    prefix_cache_salt: str = ""  # part of every block hash: the model, or anything else that changes KV
    speculative: SpeculativeConfig | None = None

    def __post_init__(self) -> None:
        for name in ("max_num_batched_tokens", "max_num_seqs", "max_model_len", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"SchedulerConfig.{name} must be an int >= 1, got {value!r}")
        if not isinstance(self.num_blocks, int) or self.num_blocks < 2:
            raise ValueError(
                f"SchedulerConfig.num_blocks must be an int >= 2 (block 0 is the null block), got {self.num_blocks!r}"
            )
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ValueError(
                f"SchedulerConfig.max_num_batched_tokens ({self.max_num_batched_tokens}) must "
                f"be >= max_model_len ({self.max_model_len}) when enable_chunked_prefill is False"
            )
        threshold = self.long_prefill_token_threshold
        if threshold is not None:
            if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
                raise ValueError(
                    f"SchedulerConfig.long_prefill_token_threshold must be None or an int >= 1, got {threshold!r}"
                )
            if not self.enable_chunked_prefill:
                raise ValueError("SchedulerConfig.long_prefill_token_threshold needs enable_chunked_prefill=True")


@dataclass(frozen=True)
class SchedulerOutput:
    """What one step computes, as plain data for the model runner.

    All dicts are keyed by request id and share one order: running requests first (admission
    order), then the requests admitted this step. The runner lays tokens out on the flattened token
    axis in that order. For a scheduled request ``r`` with ``c = num_computed_tokens[r]`` and
    ``n = num_scheduled_tokens[r]``:

    - ``token_ids[r]`` are its tokens at positions ``c .. c+n-1``; their KV goes into
      ``block_tables[r][pos // block_size]`` at offset ``pos % block_size``; attention reads the
      first ``c + n`` positions.
    - ``block_tables[r]`` covers at least ``c + n`` tokens; pad it with the null block (id 0).
    - the runner samples a token for ``r`` only if ``r in sample_req_ids`` (``c + n`` equals the
      request's ``num_tokens``: its prompt, and any outputs being recomputed after a preemption,
      are fully processed), from the logits of its last scheduled token, with
      ``sampling_params[r]``. ``update_from_output`` expects a token for exactly those requests.

    ``scheduled_new_reqs``, ``scheduled_resumed_reqs`` and ``scheduled_running_reqs`` partition the
    scheduled ids: first admission, re-admission after a preemption (recomputing from position 0),
    and continuing. ``preempted_req_ids`` lost their KV in this step (none of them is scheduled in
    it); ``finished_req_ids`` finished or were aborted since the previous ``schedule()``. A runner
    that keeps per-request state drops it for both.
    """

    num_scheduled_tokens: dict[str, int]
    total_num_scheduled_tokens: int
    scheduled_new_reqs: tuple[str, ...]
    scheduled_resumed_reqs: tuple[str, ...]
    scheduled_running_reqs: tuple[str, ...]
    num_computed_tokens: dict[str, int]
    token_ids: dict[str, list[int]]
    block_tables: dict[str, list[int]]
    sample_req_ids: tuple[str, ...]
    sampling_params: dict[str, SamplingParams]
    preempted_req_ids: tuple[str, ...]
    finished_req_ids: tuple[str, ...]
    # Speculative decoding: draft tokens of decoding requests, the last entries of their token_ids (and
    # counted in num_scheduled_tokens). The runner samples a token after every one of them too and
    # returns the list (the token after the real one, then one after each draft) for such a request.
    draft_token_ids: dict[str, list[int]] = field(default_factory=dict)
    # Requests prefilled by another engine, admitted this step (also in scheduled_new_reqs): their
    # prompt's KV must be written into block_tables[r] from position imported_kv_starts[r] (the
    # positions before it are this engine's own prefix-cache hits) before the step runs.
    imported_kv_starts: dict[str, int] = field(default_factory=dict)
    # Scheduled requests whose sampling reads their tokens or a grammar (``needs_history``: penalties,
    # logit_bias, min_tokens): the runner fills their sampler-state row from them. Never drafted.
    history: dict[str, Request] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """Nothing to compute: the engine skips the model call (but still reports finished ids)."""
        return self.total_num_scheduled_tokens == 0


@dataclass(frozen=True)
class RequestUpdate:
    """What one step did to one request: the token it produced and whether it finished."""

    request_id: str
    new_token_ids: tuple[int, ...]
    finish_reason: str | None  # "stop" | "length" | None while it keeps running

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass(frozen=True)
class SchedulerStats:
    num_running: int
    num_waiting: int
    kv_cache_usage: float  # fraction of usable KV blocks held by requests
    num_free_blocks: int
    num_preemptions_total: int


class Scheduler:
    """FCFS continuous batching over a paged KV cache: chunked prefill, preemption by recompute."""

    def __init__(self, config: SchedulerConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.kv_cache_manager = KVCacheManager(
            config.num_blocks,
            config.block_size,
            config.max_model_len,
            enable_caching=config.enable_prefix_caching,
            salt=config.prefix_cache_salt,
        )
        self._clock = clock
        self.requests: dict[str, Request] = {}  # every unfinished request
        self.waiting: deque[Request] = deque()  # FCFS; preempted requests re-enter at the front
        self.running: list[Request] = []  # admission order: the last one is preempted first
        # Requests whose prompt another engine prefilled (disaggregation), waiting for seats and blocks:
        # admitted after the running ones and before ``waiting``, as each needs only one token of budget.
        self.prefilled: deque[Request] = deque()
        self._finished_req_ids: list[str] = []  # since the last schedule()
        self.num_preemptions_total = 0
        self.proposer = NgramProposer(config.speculative) if config.speculative else None

    # ---- requests in and out -------------------------------------------------------------------

    def add_request(self, request: Request) -> None:
        """Queue a new request. Raises ValueError for a duplicate id or one that can never fit."""
        if request.request_id in self.requests:
            raise ValueError(f"request {request.request_id!r} is already scheduled")
        if request.status is not RequestStatus.WAITING or request.num_computed_tokens != 0:
            raise ValueError(f"request {request.request_id!r} is not a fresh request")
        self._check_fits(request)
        self.requests[request.request_id] = request
        self.waiting.append(request)

    def add_prefilled_request(self, request: Request, first_token: int) -> str | None:
        """Queue a fresh request whose prompt was prefilled elsewhere and whose first token is
        ``first_token``: it is only decoded here (the engine writes the prompt's KV into the blocks the
        admission gives it; ``SchedulerOutput.imported_kv_starts``). Returns a finish reason if the
        first token already ends the request (nothing is queued then), else None. Raises ValueError
        like ``add_request``."""
        if request.request_id in self.requests:
            raise ValueError(f"request {request.request_id!r} is already scheduled")
        if request.status is not RequestStatus.WAITING or request.num_computed_tokens or request.output_token_ids:
            raise ValueError(f"request {request.request_id!r} is not a fresh request")
        self._check_fits(request)
        self._append_token(request, first_token)
        status = self._stop_status(request, first_token)
        if status is not None:
            request.status = status
            request.finish_time = self._clock()
            return request.finish_reason
        self.requests[request.request_id] = request
        self.prefilled.append(request)
        return None

    def _check_fits(self, request: Request) -> None:
        max_tokens = request.sampling_params.max_tokens
        longest = request.num_prompt_tokens + max_tokens
        if longest > self.config.max_model_len:
            raise ValueError(
                f"request {request.request_id!r}: prompt ({request.num_prompt_tokens} tokens) + "
                f"max_tokens ({max_tokens}) = {longest} exceeds max_model_len "
                f"({self.config.max_model_len})"
            )
        # The last sampled token is never fed back, so at most longest - 1 tokens need KV.
        blocks = self.kv_cache_manager.num_blocks_needed(longest - 1)
        usable = self.config.num_blocks - 1
        if blocks > usable:
            raise ValueError(
                f"request {request.request_id!r}: needs up to {blocks} KV blocks of "
                f"{self.config.block_size} tokens but the cache has only {usable}"
            )

    def abort_request(self, request_id: str) -> bool:
        """Cancel a waiting or running request and free its KV at once.

        Returns False (and does nothing) for an unknown or already finished id.
        """
        request = self.requests.get(request_id)
        if request is None:
            return False
        if request.status is RequestStatus.RUNNING:
            self.running.remove(request)
        elif request in self.prefilled:
            self.prefilled.remove(request)
        else:
            self.waiting.remove(request)
        self._finish(request, RequestStatus.FINISHED_ABORTED)
        return True

    def has_unfinished_requests(self) -> bool:
        return bool(self.running or self.waiting or self.prefilled)

    # ---- one step ------------------------------------------------------------------------------

    def schedule(self) -> SchedulerOutput:
        """Pick this step's requests and token counts, allocating their KV blocks."""
        budget = self.config.max_num_batched_tokens
        scheduled: dict[str, int] = {}
        computed_before = {r.request_id: r.num_computed_tokens for r in self.running}
        running_ids, preempted, budget = self._schedule_running(scheduled, budget)
        new_ids: list[str] = []
        resumed_ids: list[str] = []
        imported: dict[str, int] = {}
        # After a preemption memory is short: admitting more would only preempt again.
        if not preempted:
            budget = self._admit_prefilled(scheduled, budget, imported)
            for rid in imported:
                computed_before[rid] = self.requests[rid].num_computed_tokens
                new_ids.append(rid)
            for request in self._schedule_waiting(scheduled, budget):
                computed_before[request.request_id] = request.num_computed_tokens
                is_resumed = request.num_preemptions > 0
                (resumed_ids if is_resumed else new_ids).append(request.request_id)
        drafts = self._schedule_drafts(scheduled, running_ids) if self.proposer and not preempted else {}
        return self._make_output(
            scheduled, computed_before, running_ids, new_ids, resumed_ids, preempted, imported, drafts
        )

    def _schedule_drafts(self, scheduled: dict[str, int], running_ids: list[str]) -> dict[str, list[int]]:
        """Draft tokens for the decoding requests, with the budget that new prompts left over (a first
        token matters more than a faster stream), and only where their blocks can be had without
        preempting anyone. A request never gets more drafts than it has tokens left to generate
        minus one (the token sampled after the drafts), so max_tokens and max_model_len still hold.
        Each draft is also one more sampled row, and the step samples at most ``max_num_seqs`` rows (the
        width of its sampling axis): drafts fill the seats that requests leave empty."""
        budget = self.config.max_num_batched_tokens - sum(scheduled.values())
        rows = self.config.max_num_seqs - len(scheduled)
        drafts: dict[str, list[int]] = {}
        for rid in running_ids:
            budget = min(budget, rows)
            if budget <= 0:
                break
            request = self.requests[rid]
            if scheduled[rid] != 1 or request.num_tokens - request.num_computed_tokens != 1:
                continue  # a prompt chunk or a recompute, not a decode step
            sp = request.sampling_params
            if sp.needs_history or sp.logprobs is not None or sp.structured is not None:
                continue  # its sampler state counts one token a step; logprobs and grammar masks one a row
            left = min(
                request.sampling_params.max_tokens - request.num_output_tokens,
                self.config.max_model_len - request.num_tokens + 1,
            )
            k = min(budget, left - 1)
            if k < 1:
                continue
            draft = self.proposer.propose(rid, request.all_token_ids, k)
            if not draft or self.kv_cache_manager.allocate_slots(request, 1 + len(draft)) is None:
                continue
            drafts[rid] = draft
            budget -= len(draft)
            rows -= len(draft)
        return drafts

    def _num_tokens_to_schedule(self, request: Request, num_computed: int, budget: int) -> int:
        num_new = request.num_tokens - num_computed
        threshold = self.config.long_prefill_token_threshold
        if threshold is not None:
            num_new = min(num_new, threshold)
        if num_new > budget and not self.config.enable_chunked_prefill:
            return 0
        return min(num_new, budget)

    def _schedule_running(self, scheduled: dict[str, int], budget: int) -> tuple[list[str], list[str], int]:
        """Give running requests their tokens in admission order, preempting from the back when
        the KV cache is full. Returns (scheduled ids, preempted ids, budget left)."""
        scheduled_ids: list[str] = []
        preempted: list[str] = []
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            num_new = self._num_tokens_to_schedule(request, request.num_computed_tokens, budget)
            if num_new == 0:
                index += 1
                continue
            # Victims come from the back, and everything before ``index`` is already scheduled,
            # so a victim is never a request that this step already counts on.
            while self.kv_cache_manager.allocate_slots(request, num_new) is None:
                victim = self.running.pop()
                self._preempt(victim)
                preempted.append(victim.request_id)
                if victim is request:
                    return scheduled_ids, preempted, budget
            scheduled[request.request_id] = num_new
            scheduled_ids.append(request.request_id)
            budget -= num_new
            index += 1
        return scheduled_ids, preempted, budget

    def _admit_prefilled(self, scheduled: dict[str, int], budget: int, imported: dict[str, int]) -> int:
        """Admit prefilled requests in arrival order while seats, budget and blocks last; each is
        scheduled for its one decode token (the first output). Blocks cover its prompt and that token;
        the prompt's full blocks this engine already caches are shared, and the KV is imported from
        the first position after them. Returns the budget left."""
        kv = self.kv_cache_manager
        while self.prefilled and budget > 0 and len(self.running) < self.config.max_num_seqs:
            request = self.prefilled[0]
            cached_blocks, num_cached = kv.get_computed_blocks(request)
            if kv.allocate_slots(request, request.num_tokens - num_cached, cached_blocks) is None:
                break
            self.prefilled.popleft()
            request.num_computed_tokens = request.num_prompt_tokens
            request.status = RequestStatus.RUNNING
            request.first_scheduled_time = self._clock()
            self.running.append(request)
            scheduled[request.request_id] = request.num_tokens - request.num_prompt_tokens
            budget -= scheduled[request.request_id]
            imported[request.request_id] = num_cached
        return budget

    def _schedule_waiting(self, scheduled: dict[str, int], budget: int) -> list[Request]:
        """Admit waiting requests in FCFS order while budget, seats and blocks last. A request that
        does not fit blocks the ones behind it (no overtaking)."""
        admitted: list[Request] = []
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs:
            request = self.waiting[0]
            cached_blocks, num_cached = self.kv_cache_manager.get_computed_blocks(request)
            num_new = self._num_tokens_to_schedule(request, num_cached, budget)
            if num_new == 0:
                break
            if self.kv_cache_manager.allocate_slots(request, num_new, cached_blocks) is None:
                break
            self.waiting.popleft()
            request.num_computed_tokens = num_cached
            request.status = RequestStatus.RUNNING
            if request.first_scheduled_time is None:
                request.first_scheduled_time = self._clock()
            self.running.append(request)
            scheduled[request.request_id] = num_new
            budget -= num_new
            admitted.append(request)
        return admitted

    def _preempt(self, request: Request) -> None:
        self.kv_cache_manager.free(request)
        request.status = RequestStatus.PREEMPTED
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions_total += 1
        self.waiting.appendleft(request)

    def _make_output(
        self,
        scheduled: dict[str, int],
        computed_before: dict[str, int],
        running_ids: list[str],
        new_ids: list[str],
        resumed_ids: list[str],
        preempted: list[str],
        imported: dict[str, int],
        drafts: dict[str, list[int]],
    ) -> SchedulerOutput:
        token_ids: dict[str, list[int]] = {}
        sample_ids: list[str] = []
        for req_id, num_new in scheduled.items():
            request = self.requests[req_id]
            start = computed_before[req_id]
            token_ids[req_id] = request.token_slice(start, start + num_new) + drafts.get(req_id, [])
            if start + num_new == request.num_tokens:
                sample_ids.append(req_id)
        for req_id, draft in drafts.items():
            scheduled[req_id] += len(draft)
        finished = tuple(self._finished_req_ids)
        self._finished_req_ids = []
        return SchedulerOutput(
            num_scheduled_tokens=scheduled,
            total_num_scheduled_tokens=sum(scheduled.values()),
            scheduled_new_reqs=tuple(new_ids),
            scheduled_resumed_reqs=tuple(resumed_ids),
            scheduled_running_reqs=tuple(running_ids),
            num_computed_tokens={r: computed_before[r] for r in scheduled},
            token_ids=token_ids,
            block_tables={r: self.kv_cache_manager.get_block_ids(r) for r in scheduled},
            sample_req_ids=tuple(sample_ids),
            sampling_params={r: self.requests[r].sampling_params for r in scheduled},
            preempted_req_ids=tuple(preempted),
            finished_req_ids=finished,
            imported_kv_starts=imported,
            draft_token_ids=drafts,
            history={
                r: self.requests[r]
                for r in scheduled
                if self.requests[r].sampling_params.needs_history or self.requests[r].grammar is not None
            },
        )

    # ---- results of a step ---------------------------------------------------------------------

    def update_from_output(
        self, scheduler_output: SchedulerOutput, sampled_token_ids: dict[str, int | list[int]]
    ) -> list[RequestUpdate]:
        """Advance ``num_computed_tokens`` by what the step computed, append the sampled tokens,
        finish requests that hit a stop condition and free their KV.

        ``sampled_token_ids`` must hold a token for every id in ``scheduler_output.sample_req_ids``
        (requests aborted since ``schedule()`` may be missing) and for no other id: an int, or for a
        request with drafts the list of 1 + len(drafts) tokens sampled after its real token and after
        each draft. The drafts are kept while they equal what was sampled, and the request gains the
        kept ones plus the token sampled after them; its KV counts only the rows fed the right tokens.
        Returns one update per request that produced tokens, in step order.
        """
        self._check_sampled(scheduler_output, sampled_token_ids)
        updates: list[RequestUpdate] = []
        drafts = scheduler_output.draft_token_ids
        for req_id, num_new in scheduler_output.num_scheduled_tokens.items():
            request = self._running_request(req_id)
            if request is None:
                continue  # aborted between schedule() and now
            draft = drafts.get(req_id)
            if draft:
                sampled = list(sampled_token_ids[req_id])
                kept = num_accepted(draft, sampled)
                self.proposer.record(req_id, len(draft), kept)
                request.num_computed_tokens += num_new - len(draft) + kept
                tokens = sampled[: kept + 1]
            else:
                request.num_computed_tokens += num_new
                tokens = None
            self.kv_cache_manager.cache_full_blocks(request)
            if request.num_computed_tokens < request.num_tokens:
                continue  # a prompt (or a recompute after preemption) still catching up
            tokens = tokens or [sampled_token_ids[req_id]]
            appended: list[int] = []
            status = None
            for token in tokens:
                self._append_token(request, token)
                appended.append(token)
                status = self._stop_status(request, token)
                if status is not None:
                    break
            if status is not None:
                self.running.remove(request)
                self._finish(request, status)
            updates.append(RequestUpdate(req_id, tuple(appended), request.finish_reason))
        return updates

    def _running_request(self, req_id: str) -> Request | None:
        request = self.requests.get(req_id)
        if request is None or request.status is not RequestStatus.RUNNING:
            return None
        return request

    def _check_sampled(self, out: SchedulerOutput, sampled: dict[str, int]) -> None:
        """Reject a runner/scheduler contract violation before any state changes."""
        expected = {r for r in out.sample_req_ids if self._running_request(r) is not None}
        extra = set(sampled) - set(out.sample_req_ids)
        missing = expected - set(sampled)
        if extra or missing:
            raise ValueError(
                f"sampled tokens do not match the step's sample_req_ids: "
                f"missing {sorted(missing)}, unexpected {sorted(extra)}"
            )

    def _append_token(self, request: Request, token: int) -> None:
        request.output_token_ids.append(token)
        # KV for the new token is computed next step, so the count still lags by exactly one.
        if request.first_token_time is None:
            request.first_token_time = self._clock()

    def _stop_status(self, request: Request, token: int) -> RequestStatus | None:
        params = request.sampling_params
        if not params.ignore_eos and (token in request.eos_token_ids or token in params.stop_token_ids):
            return RequestStatus.FINISHED_STOPPED
        if request.num_output_tokens >= params.max_tokens:
            return RequestStatus.FINISHED_LENGTH
        if request.num_tokens >= self.config.max_model_len:
            return RequestStatus.FINISHED_LENGTH
        return None

    def _finish(self, request: Request, status: RequestStatus) -> None:
        self.kv_cache_manager.free(request)
        if self.proposer:
            self.proposer.forget(request.request_id)
        request.status = status
        request.finish_time = self._clock()
        del self.requests[request.request_id]
        self._finished_req_ids.append(request.request_id)

    # ---- stats ---------------------------------------------------------------------------------

    @property
    def num_running(self) -> int:
        return len(self.running)

    @property
    def num_waiting(self) -> int:
        return len(self.waiting) + len(self.prefilled)

    @property
    def kv_cache_usage(self) -> float:
        return self.kv_cache_manager.usage

    def get_stats(self) -> SchedulerStats:
        return SchedulerStats(
            num_running=len(self.running),
            num_waiting=len(self.waiting),
            kv_cache_usage=self.kv_cache_manager.usage,
            num_free_blocks=self.kv_cache_manager.num_free_blocks,
            num_preemptions_total=self.num_preemptions_total,
        )
