"""The engine: continuous batching over the paged KV cache, in three parts as vLLM v1 splits it.

    add_request(prompt, params) -> InputProcessor (tokenize, check, grammar) -> Scheduler.waiting
    step():  Scheduler.schedule() -> ModelRunner.execute() -> Scheduler.update_from_output()
             -> OutputProcessor per request: incremental detokenizer -> stop strings -> RequestOutput

``builder.build`` loads the model, puts the weights on the device and sizes the KV cache
(``runtime.core.kv_sizing``); ``handover.KVHandover`` is prefill/decode disaggregation's KV in and out.
``LLMEngine`` is synchronous and single-threaded: whoever calls ``step`` owns it. ``AsyncLLMEngine``
(runtime/engine/async_engine.py) runs that loop on its own thread for asyncio callers; offline
generation (runtime/engine/offline.py) calls ``step`` itself. A request that cannot be served (empty,
too long for the context, bad parameters) fails alone with ``RequestError``; the engine keeps serving
the others.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence

import numpy as np

from runtime.api import EngineConfig, EngineStats, RequestError, RequestOutput, SamplingParams, StructuredOutput
from runtime.distributed.kv_transfer import PrefilledKV
from runtime.engine import batch
from runtime.engine.builder import MemoryStats, build
from runtime.engine.handover import KVHandover
from runtime.engine.input_processor import InputProcessor
from runtime.engine.output_processor import OutputProcessor
from runtime.engine.stats import StepCounters
from runtime.loading.gguf import LoadedGGUF


class LLMEngine:
    def __init__(
        self,
        config: EngineConfig = EngineConfig(),
        *,
        loaded: LoadedGGUF | None = None,
        platform: str | None = None,
        memory_stats: MemoryStats | None = None,
    ):
        """``platform`` (a JAX platform name) and ``memory_stats`` stand in for the device's in tests:
        defaults are ``jax.default_backend()`` and ``runtime.platform.device_memory_stats``."""
        self.config = config
        parts = build(config, loaded=loaded, platform=platform, memory_stats=memory_stats)
        self.platform, self.attention_backend = parts.platform, parts.attention_backend
        self.dtype, self.kv_dtype = parts.dtype, parts.kv_dtype
        self.model_config, self.tokenizer, self.max_model_len = parts.model_config, parts.tokenizer, parts.max_model_len
        self.tensor_parallel, self.num_blocks = parts.tensor_parallel, parts.num_blocks
        self.kv_cache_plan = parts.kv_cache_plan
        self.scheduler, self.runner = parts.scheduler, parts.runner
        self.inputs = InputProcessor(parts.tokenizer, parts.model_config.vocab_size, parts.max_model_len)
        self.outputs = OutputProcessor(parts.tokenizer, self.scheduler.abort_request)
        self.handover = KVHandover(parts.runner, self.kv_fingerprint, parts.kv_dtype)
        self.counters = StepCounters(self.runner.weight_bytes(), parts.weight_bits)
        self._ids = itertools.count()
        self.warmed_up = False
        self.transfer_warmup = (False, False)  # (export, import) programs to compile at warm-up

    @property
    def kv_fingerprint(self) -> str:
        return self.scheduler.config.prefix_cache_salt

    def warmup(self, progress: Callable[[int, int], None] | None = None, *, background: bool = False) -> int:
        """Compile the step's buckets (``ModelRunner.warmup``; ``background``: the rest after two)."""
        n = self.runner.warmup(progress, background=background, prime=self.config.prime_programs)
        export, imports = self.transfer_warmup
        if export or imports:  # a prefill or decode role (runtime/serving/disagg.py): its KV transfer programs too
            n += self.runner.warmup_transfer(export, imports)
        self.warmed_up = True
        return n

    # ------------------------------------------------------------ requests (InputProcessor's checks)

    def encode(self, prompt: str | Sequence[int] | Sequence[dict]) -> list[int]:
        return self.inputs.encode(prompt)

    def check_length(self, num_prompt_tokens: int, max_tokens: int = 1) -> None:
        self.inputs.check_length(num_prompt_tokens, max_tokens)

    def grammar_matcher(self, spec: StructuredOutput):
        return self.inputs.grammar_matcher(spec)

    def add_request(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> str:
        """Queue a request; raises ``RequestError`` (this request only) if it can never be served."""
        request_id = request_id or f"req-{next(self._ids)}"
        request = self.inputs.new_request(prompt, sampling_params, request_id)
        try:
            self.scheduler.add_request(request)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        self.outputs.add(request)
        return request_id

    def add_prefill_request(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> str:
        """Queue a prefill-only request: its prompt is computed and its first token sampled (with
        ``sampling_params``' temperature, top-p/k and seed; its length and stop rules are the decode
        side's business), then it finishes and its final ``RequestOutput.prefilled`` carries the
        prompt's KV (``runtime.distributed.kv_transfer.PrefilledKV``) for another engine's
        ``add_prefilled_request``."""
        request_id = self.add_request(prompt, KVHandover.prefill_only(sampling_params), request_id)
        self.handover.expect_export(request_id)
        return request_id

    def add_prefilled_request(
        self,
        prefilled: PrefilledKV,
        sampling_params: SamplingParams = SamplingParams(),
        request_id: str | None = None,
        arrival_time: float | None = None,
    ) -> RequestOutput:
        """Continue a request that another engine prefilled: returns the output of its first token at
        once; its KV is written into this engine's blocks when a step admits it, and it decodes from
        there like any other request. ``arrival_time`` (``time.monotonic``): when the request arrived
        before its prefill was fetched, so TTFT counts the prefill. Raises ``RequestError`` (a bad
        request) or ``KVTransferError`` (a payload from an engine with another model, precision or
        KV layout)."""
        self.handover.check(prefilled)
        request_id = request_id or f"req-{next(self._ids)}"
        request = self.inputs.new_request(prefilled.prompt_token_ids, sampling_params, request_id)
        if arrival_time is not None:
            request.arrival_time = arrival_time
        try:
            reason = self.scheduler.add_prefilled_request(request, prefilled.first_token)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        state = self.outputs.add(request)
        out = self.outputs.output(state, [prefilled.first_token], reason)
        if reason is None and not out.finished:  # else the first token ended it (end token, max_tokens 1, a stop)
            self.handover.hold(request_id, prefilled)
        return out

    def abort_request(self, request_id: str) -> bool:
        """Stop a request now and free its KV blocks."""
        self.outputs.states.pop(request_id, None)
        self.handover.forget(request_id)
        return self.scheduler.abort_request(request_id)

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished_requests()

    # ------------------------------------------------------------ the step

    def step(self) -> list[RequestOutput]:
        out = self.scheduler.schedule()
        self.handover.write_imported(out.imported_kv_starts, out.block_tables)  # prefilled elsewhere: KV first
        self.outputs.scheduled(out.scheduled_new_reqs, out.num_computed_tokens)
        self.handover.scheduled(out.scheduled_new_reqs, out.num_computed_tokens)
        t0 = time.perf_counter()
        sampled, logprobs = self.runner.execute(out)
        self.counters.stepped(out, time.perf_counter() - t0)
        outputs = []
        for u in self.scheduler.update_from_output(out, sampled):
            state = self.outputs.states.get(u.request_id)
            if state is None:  # aborted meanwhile
                continue
            prefilled = self.handover.export_if_done(state.request, u.finished, out.block_tables[u.request_id])
            outputs.append(self.outputs.output(state, u.new_token_ids, u.finish_reason, logprobs.get(u.request_id)))
            outputs[-1].prefilled = prefilled
        return outputs

    @property
    def num_steps(self) -> int:
        return self.counters.num_steps

    # ------------------------------------------------------------ scoring, stats, offline generation

    def score(self, token_ids, chunk: int = 128):
        """Teacher-forced logits [len, V] of ``token_ids`` through this engine's model, attention and KV
        cache (see ``ModelRunner.score``). Only on an idle engine; it empties the prefix cache, whose
        blocks the scoring overwrites."""
        self._clear_for_scoring()
        return self.runner.score(token_ids, chunk)

    def prompt_logits(self, prompt) -> np.ndarray:
        """float32 logits [V] of the token that would follow ``prompt`` (as ``encode`` takes it), the whole
        prompt in one prefill as a request's first step computes it; only on an idle engine (see ``score``).
        Raises ``RequestError`` for a prompt ``add_request`` would refuse."""
        ids = self.encode(prompt)
        self.check_length(len(ids))
        self._clear_for_scoring()
        return self.runner.score(ids, len(ids), last_only=True)

    def _clear_for_scoring(self) -> None:
        if self.has_unfinished_requests() or not self.scheduler.kv_cache_manager.reset_prefix_cache():
            raise RuntimeError("scoring needs an idle engine")

    def stats(self) -> EngineStats:
        return self.counters.stats(self.scheduler, self.num_blocks, self.config.max_num_batched_tokens)

    def generate(
        self,
        prompts: Sequence,
        sampling_params: SamplingParams | Sequence[SamplingParams] = SamplingParams(),
        progress: Callable[[RequestOutput], None] | None = None,
    ) -> list[RequestOutput]:
        """Run many prompts to completion with continuous batching; one final output per prompt, in order
        (``runtime.engine.batch.generate``)."""
        return batch.generate(self, prompts, sampling_params, progress)
