"""The engine: continuous batching over the paged KV cache.

    add_request(prompt, params) -> Scheduler.waiting
    step():  Scheduler.schedule() -> ModelRunner.execute() -> Scheduler.update_from_output()
             -> per request: incremental detokenizer -> stop strings -> RequestOutput (text delta)

``LLMEngine`` is synchronous and single-threaded: whoever calls ``step`` owns it. ``AsyncLLMEngine``
(runtime/engine/async_engine.py) runs that loop on its own thread for asyncio callers; offline
generation (runtime/engine/offline.py) calls ``step`` itself. A request that cannot be served (empty,
too long for the context, bad parameters) fails alone with ``RequestError``; the engine keeps serving
the others.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jax
import numpy as np

from runtime.api import (
    QUANTIZED_KV_DTYPE_NAMES,
    EngineConfig,
    EngineStats,
    RequestError,
    RequestMetrics,
    RequestOutput,
    SamplingParams,
)
from runtime.core.kv_sizing import (
    DEFAULT_KV_CACHE_BYTES,
    KVShape,
    blocks_for_budget,
    format_bytes,
    kv_budget_from_memory,
    kv_bytes_per_block,
)
from runtime.core.request import Request
from runtime.core.scheduler import Scheduler, SchedulerConfig
from runtime.core.speculative import SpeculativeConfig
from runtime.core.stopping import StopStringMatcher
from runtime.distributed.kv_transfer import KVTransferError, PrefilledKV
from runtime.distributed.kv_transfer import stage as stage_kv
from runtime.distributed.sharding import TensorParallel
from runtime.dtypes import DTYPES
from runtime.loading.gguf import LoadedGGUF, load_gguf, native_params
from runtime.loading.presets import resolve_gguf
from runtime.loading.tokenizer import IncrementalDetokenizer, Tokenizer
from runtime.platform import (
    configure_xla,
    current_platform,
    device_memory_stats,
    is_accelerator,
    platform_family,
    resolve_dtype,
)
from runtime.quant.kv import KV_DTYPES, kv_dtype_support_error
from runtime.quant.weights import dense_params, quantize_params
from runtime.worker.attention import resolve_backend
from runtime.worker.model_runner import ModelRunner, enable_compilation_cache, params_to_device

log = logging.getLogger("runtime.engine")


MemoryStats = Callable[[], "dict[str, int] | None"]  # -> {"bytes_limit", "bytes_in_use"}, or None (CPU)


@dataclass(frozen=True)
class KVCachePlan:
    """How big the KV cache is and why (logged at start; ``LLMEngine.kv_cache_plan``)."""

    num_blocks: int
    budget_bytes: int | None  # None: num_blocks was given
    source: str


def plan_kv_cache(
    config: EngineConfig,
    shape: KVShape,
    kv_dtype: str,
    *,
    platform: str,
    memory_stats: MemoryStats,
    num_devices: int = 1,
) -> KVCachePlan:
    """The block count: ``num_blocks``, else ``kv_cache_bytes``, else on an accelerator
    ``kv_cache_memory_fraction x bytes_limit - bytes_in_use`` (``memory_stats()``, read after the weights
    loaded; per device, times ``num_devices`` for a cache split over them), else (CPU, or a device that
    reports no memory) the fixed default. Raises ValueError when the budget holds fewer than 2 blocks."""
    if config.num_blocks:
        return KVCachePlan(config.num_blocks, None, "num_blocks")
    if config.kv_cache_bytes:
        budget, source = config.kv_cache_bytes, "kv_cache_bytes"
    else:
        stats = memory_stats() if is_accelerator(platform) else None
        if stats is None:
            if is_accelerator(platform):
                log.warning("the %s device reports no memory stats: KV budget is the fixed default", platform)
            budget, source = DEFAULT_KV_CACHE_BYTES, f"the fixed default on {platform}"
        else:
            limit, in_use, f = stats["bytes_limit"], stats["bytes_in_use"], config.kv_cache_memory_fraction
            budget = kv_budget_from_memory(limit, in_use, f) * num_devices
            source = (
                f"kv_cache_memory_fraction {f} x {format_bytes(limit)} - {format_bytes(in_use)} in use after "
                f"the weights loaded" + (f", per device x {num_devices} devices" if num_devices > 1 else "")
            )
    num_blocks = blocks_for_budget(shape, kv_dtype, config.block_size, budget)
    if num_blocks < 2:
        raise ValueError(
            f"the KV budget of {budget} bytes ({source}) holds {num_blocks} blocks of "
            f"{kv_bytes_per_block(shape, kv_dtype, config.block_size)} bytes; need at least 2"
        )
    return KVCachePlan(num_blocks, budget, source)


# SamplingParams.structured: a JSON object of these (runtime.structured.StructuredSpec.from_openai's keywords)
STRUCTURED_PARTS = frozenset({"response_format", "tools", "tool_choice", "parallel_tool_calls"})


@dataclass
class _ReqState:
    request: Request
    detok: IncrementalDetokenizer
    matcher: StopStringMatcher
    stop_ids: frozenset[int]
    cached_tokens: int | None = None  # prompt tokens found in the prefix cache when first scheduled


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
        configure_xla()
        self.config = config
        self.platform = platform = platform or current_platform()
        # Checked before anything loads: a backend this platform cannot run fails at once, naming the option.
        self.attention_backend = resolve_backend(config.attention_backend, platform)
        self.dtype = dtype = resolve_dtype(config.dtype, platform)
        if config.compilation_cache:
            enable_compilation_cache()
        loaded = loaded or load_gguf(config.gguf_path or resolve_gguf(config.model))
        self.model_config = loaded.config
        self.tokenizer = Tokenizer.from_gguf_metadata(loaded.metadata)
        self.max_model_len = min(config.max_model_len, loaded.config.max_position_embeddings)
        kv_dtype = config.kv_dtype or dtype
        # Needs the device (is float8 there?), so checked here, after configure_xla, not in the config.
        unsupported = kv_dtype_support_error(kv_dtype, self.attention_backend, platform_family(platform))
        if unsupported:
            raise ValueError(unsupported)
        # Needs the model's head counts and the devices, so checked here too; None for 1 device.
        tp = TensorParallel.plan(loaded.config, config.tensor_parallel, weight_quant=config.weight_quant)
        served = tp.config if tp else loaded.config  # kv heads repeated when fewer than devices
        self.tensor_parallel = tp
        self.kv_dtype = kv_dtype
        # The weights first: on an accelerator the KV cache gets what they leave of the device's memory.
        if tp:
            params = tp.shard_params(tp.replicate_kv_heads(loaded.params), DTYPES[dtype])
        else:
            if config.weight_quant == "gguf":
                host = native_params(loaded.path)  # the file's own Q8_0 / Q4_1 blocks
            elif config.weight_quant == "none" and config.dense_kernel and platform == "cpu" and dtype == "float32":
                host = dense_params(loaded.params)  # row-major for the CPU kernel (same float32 weights)
            else:
                host = quantize_params(loaded.params, config.weight_quant, config.weight_quant_group)
            params = params_to_device(host, DTYPES[dtype])
        devices = list(tp.mesh.devices.flat) if tp else None
        if memory_stats is None:

            def memory_stats():
                jax.block_until_ready(params)  # bytes_in_use counts them once they are on the device
                return device_memory_stats(devices)

        kv_shape = KVShape.of(served)
        plan = plan_kv_cache(
            config, kv_shape, kv_dtype, platform=platform, memory_stats=memory_stats, num_devices=tp.size if tp else 1
        )
        self.kv_cache_plan = plan
        num_blocks = plan.num_blocks
        kv_size = format_bytes(num_blocks * kv_bytes_per_block(kv_shape, kv_dtype, config.block_size))
        log.info(
            "KV cache: %d blocks of %d tokens, %s of %s (budget: %s); %s on %s, attention %s",
            num_blocks,
            config.block_size,
            kv_size,
            kv_dtype,
            plan.source,
            dtype,
            platform,
            self.attention_backend,
        )
        self.scheduler = Scheduler(
            SchedulerConfig(
                max_num_batched_tokens=config.max_num_batched_tokens,
                max_num_seqs=config.max_num_seqs,
                max_model_len=self.max_model_len,
                block_size=config.block_size,
                num_blocks=num_blocks,
                enable_chunked_prefill=config.enable_chunked_prefill,
                enable_prefix_caching=config.enable_prefix_caching,
                prefix_cache_salt=self._fingerprint(config, dtype, kv_dtype),
                speculative=(
                    SpeculativeConfig(config.num_speculative_tokens, config.prompt_lookup_min, config.prompt_lookup_max)
                    if config.speculative == "ngram"
                    else None
                ),
            )
        )
        self.runner = ModelRunner(
            served,
            params,
            num_blocks=num_blocks,
            block_size=config.block_size,
            max_num_seqs=config.max_num_seqs,
            max_num_batched_tokens=config.max_num_batched_tokens,
            max_model_len=self.max_model_len,
            dtype=DTYPES[dtype],
            kv_dtype=KV_DTYPES[kv_dtype],
            attention_backend=self.attention_backend,
            tensor_parallel=tp,
            platform=platform,
        )
        self._weight_bytes = self.runner.weight_bytes()
        quant_bits = {"int8": 8, "int4": 4, "gguf": 0}
        self._weight_bits = quant_bits.get(config.weight_quant, np.dtype(DTYPES[dtype]).itemsize * 8)
        self._states: dict[str, _ReqState] = {}
        self.num_blocks = num_blocks
        self._grammars = None  # runtime.structured.GrammarCompiler, built on the first structured request
        # Prefill/decode disaggregation (runtime/serving/disagg.py): prefill-only requests whose KV is exported
        # when they finish (id -> prompt tokens found in the prefix cache), and the KV of prefilled
        # requests waiting for the step that admits them.
        self._exports: dict[str, int] = {}
        self._imports: dict[str, PrefilledKV] = {}
        self._ids = itertools.count()
        self.num_steps = 0
        self.decode_steps = self.decode_seqs = 0  # decode-only steps, and their sequences summed
        self.decode_seconds = 0.0  # and their wall time: the advisor's step time against the weights' read
        self.warmed_up = False
        self.transfer_warmup = (False, False)  # (export, import) programs to compile at warm-up

    @staticmethod
    def _fingerprint(config: EngineConfig, dtype: str, kv_dtype: str) -> str:
        """Everything that changes the KV values: salts the prefix cache, and a KV import must match it."""
        return f"{config.model}|{config.gguf_path}|{dtype}|{kv_dtype}|{config.weight_quant}{config.weight_quant_group}"

    @property
    def kv_fingerprint(self) -> str:
        return self.scheduler.config.prefix_cache_salt

    # ------------------------------------------------------------ requests

    def warmup(self, progress: Callable[[int, int], None] | None = None, *, background: bool = False) -> int:
        """Compile the step's buckets (``ModelRunner.warmup``; ``background``: the rest after two)."""
        n = self.runner.warmup(progress, background=background, prime=self.config.prime_programs)
        export, imports = self.transfer_warmup
        if export or imports:  # a prefill or decode role (runtime/serving/disagg.py): its KV transfer programs too
            n += self.runner.warmup_transfer(export, imports)
        self.warmed_up = True
        return n

    def encode(self, prompt: str | Sequence[int] | Sequence[dict]) -> list[int]:
        """Text, token ids, or chat messages (rendered through the model's chat template)."""
        if isinstance(prompt, str):
            if not prompt.strip():
                raise RequestError("the prompt is empty")
            return self.tokenizer.encode(prompt)
        prompt = list(prompt)
        if not prompt:
            raise RequestError("the prompt is empty")
        if all(isinstance(m, dict) for m in prompt):
            return self.tokenizer.apply_chat_template(prompt, add_generation_prompt=True)
        if not all(isinstance(t, (int, np.integer)) and 0 <= t < self.model_config.vocab_size for t in prompt):
            raise RequestError(f"prompt token ids must be ints in [0, {self.model_config.vocab_size})")
        return [int(t) for t in prompt]

    def add_request(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> str:
        """Queue a request; raises ``RequestError`` (this request only) if it can never be served."""
        request_id = request_id or f"req-{next(self._ids)}"
        request = self._new_request(prompt, sampling_params, request_id)
        try:
            self.scheduler.add_request(request)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        self._states[request_id] = self._new_state(request)
        return request_id

    def _new_request(self, prompt, sampling_params: SamplingParams, request_id: str) -> Request:
        try:
            prompt_ids = self.encode(prompt)
        except RequestError:
            raise
        except ValueError as exc:  # bad chat messages, template errors
            raise RequestError(str(exc)) from None
        self.check_length(len(prompt_ids), sampling_params.max_tokens)
        vocab = self.model_config.vocab_size
        for what, ids in (
            ("logit_bias", [t for t, _ in sampling_params.logit_bias]),
            ("stop_token_ids", sampling_params.stop_token_ids),
        ):
            if any(t >= vocab for t in ids):
                raise RequestError(f"{what}: token id {max(ids)} is outside the vocabulary (size {vocab})", what)
        stop_ids = frozenset() if sampling_params.ignore_eos else self.tokenizer.stop_token_ids
        request = Request(request_id, prompt_ids, sampling_params, eos_token_ids=frozenset(stop_ids))
        if sampling_params.structured is not None:
            request.grammar = self.grammar_matcher(sampling_params.structured)
        return request

    def grammar_matcher(self, structured: str):
        """A fresh matcher of ``SamplingParams.structured`` (RequestError naming the field when the
        spec is bad). The compiler is built on first use (the tokenizer's preparation: 0.3 s for
        SmolLM2, 2 s for Gemma 3) and caches compiled grammars by spec."""
        from runtime.structured import GrammarCompiler, StructuredSpec

        try:
            parts = json.loads(structured)
            if not isinstance(parts, dict) or not set(parts) <= STRUCTURED_PARTS:
                raise ValueError(f"structured: a JSON object of {', '.join(sorted(STRUCTURED_PARTS))}")
            spec = StructuredSpec.from_openai(**parts)
        except ValueError as exc:
            field = str(exc).split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
            raise RequestError(str(exc), field if field in STRUCTURED_PARTS else "structured") from None
        if spec is None:
            return None
        if self._grammars is None:
            self._grammars = GrammarCompiler(self.tokenizer, vocab_size=self.model_config.vocab_size)
        try:
            return self._grammars.compile(spec).matcher()
        except ValueError as exc:
            raise RequestError(str(exc), "response_format" if spec.tools == () else "tools") from None

    def check_length(self, num_prompt_tokens: int, max_tokens: int = 1) -> None:
        """``RequestError`` unless a prompt of this length and ``max_tokens`` answer tokens fit the context."""
        room = self.max_model_len - num_prompt_tokens
        if room < 1:
            raise RequestError(
                f"the prompt is {num_prompt_tokens} tokens; the maximum context is "
                f"{self.max_model_len} tokens and at least one must be left for the answer"
            )
        if max_tokens > room:
            raise RequestError(
                f"prompt ({num_prompt_tokens} tokens) + max_tokens ({max_tokens}) "
                f"exceeds the maximum context of {self.max_model_len} tokens"
            )

    def _new_state(self, request: Request) -> _ReqState:
        sp = request.sampling_params
        return _ReqState(
            request,
            IncrementalDetokenizer(self.tokenizer),
            StopStringMatcher(sp.stop),
            request.eos_token_ids | frozenset(sp.stop_token_ids),
        )

    # ---- prefill/decode disaggregation: this engine prefills for another, or decodes what another prefilled

    def add_prefill_request(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> str:
        """Queue a prefill-only request: its prompt is computed and its first token sampled (with
        ``sampling_params``' temperature, top-p/k and seed; its length and stop rules are the decode
        side's business), then it finishes and its final ``RequestOutput.prefilled`` carries the
        prompt's KV (``runtime.distributed.kv_transfer.PrefilledKV``) for another engine's
        ``add_prefilled_request``."""
        params = dataclasses.replace(
            sampling_params, max_tokens=1, stop=(), stop_token_ids=(), ignore_eos=True, min_tokens=0, logprobs=None
        )
        request_id = self.add_request(prompt, params, request_id)
        self._exports[request_id] = 0
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
        self._check_prefilled(prefilled)
        request_id = request_id or f"req-{next(self._ids)}"
        request = self._new_request(prefilled.prompt_token_ids, sampling_params, request_id)
        if arrival_time is not None:
            request.arrival_time = arrival_time
        try:
            reason = self.scheduler.add_prefilled_request(request, prefilled.first_token)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        state = self._states[request_id] = self._new_state(request)
        if reason is None:
            self._imports[request_id] = prefilled
        out = self._output(state, [prefilled.first_token], reason)
        if out.finished:  # the first token ended it (end token, max_tokens 1, a stop string)
            self._imports.pop(request_id, None)
        return out

    def _check_prefilled(self, p: PrefilledKV) -> None:
        p.validate()
        if p.fingerprint != self.kv_fingerprint:
            raise KVTransferError(
                f"the KV was computed by {p.fingerprint!r}; this engine is {self.kv_fingerprint!r} "
                f"(model, dtype, KV dtype and weight quantization must match)"
            )
        cfg = self.runner.config
        want = (cfg.num_layers, p.num_tokens, cfg.num_kv_heads, cfg.head_dim)
        codes = self.runner.kv_caches[0][0]
        codes = getattr(codes, "codes", codes)
        if p.kv_dtype != self.kv_dtype or p.k.shape != want or p.k.dtype != codes.dtype:
            raise KVTransferError(
                f"KV of {p.kv_dtype} {p.k.dtype} {list(p.k.shape)} does not fit this engine's "
                f"{self.kv_dtype} {codes.dtype} {list(want)} cache"
            )
        if (p.k_scales is not None) != (self.kv_dtype in QUANTIZED_KV_DTYPE_NAMES):
            raise KVTransferError("an 8-bit KV cache needs its scales, a float one has none")

    def _export(self, request_id: str, block_table: list[int]) -> PrefilledKV:
        state = self._states[request_id]
        k, v, ks, vs = self.runner.export_kv(block_table, state.request.num_prompt_tokens)
        return PrefilledKV(
            state.request.prompt_token_ids,
            state.request.output_token_ids[0],
            self.kv_fingerprint,
            self.kv_dtype,
            k,
            v,
            ks,
            vs,
            num_cached_tokens=self._exports.pop(request_id),
        )

    def abort_request(self, request_id: str) -> bool:
        """Stop a request now and free its KV blocks."""
        self._states.pop(request_id, None)
        self._exports.pop(request_id, None)
        self._imports.pop(request_id, None)
        return self.scheduler.abort_request(request_id)

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished_requests()

    # ------------------------------------------------------------ the step

    def step(self) -> list[RequestOutput]:
        out = self.scheduler.schedule()
        for rid, start in out.imported_kv_starts.items():  # prefilled elsewhere: their KV goes in first
            p = self._imports.pop(rid)
            if start < p.num_tokens:
                self.runner.import_kv(out.block_tables[rid], start, p.num_tokens, p.staged or stage_kv(p))
        for rid in out.scheduled_new_reqs:
            state = self._states.get(rid)
            if state is not None and state.cached_tokens is None:
                state.cached_tokens = out.num_computed_tokens[rid]
            if rid in self._exports:
                self._exports[rid] = out.num_computed_tokens[rid]  # its prefix-cache hits
        t0 = time.perf_counter()
        sampled, logprobs = self.runner.execute(out)
        if not (
            out.is_empty or out.scheduled_new_reqs or out.scheduled_resumed_reqs
        ) and out.total_num_scheduled_tokens == len(out.num_scheduled_tokens):  # decode only: one token per sequence
            self.decode_steps += 1
            self.decode_seqs += len(out.num_scheduled_tokens)
            self.decode_seconds += time.perf_counter() - t0
        updates = self.scheduler.update_from_output(out, sampled)
        self.num_steps += 0 if out.is_empty else 1
        outputs = []
        for u in updates:
            state = self._states.get(u.request_id)
            if state is None:  # aborted meanwhile
                continue
            # A finished prefill-only request: its blocks were just freed but keep their contents
            # until the next step hands them out, so the export reads them now.
            prefilled = (
                self._export(u.request_id, out.block_tables[u.request_id])
                if u.finished and u.request_id in self._exports
                else None
            )
            outputs.append(self._output(state, u.new_token_ids, u.finish_reason, logprobs.get(u.request_id)))
            outputs[-1].prefilled = prefilled
        return outputs

    def _output(self, state: _ReqState, new_ids, finish_reason: str | None, logprobs=None) -> RequestOutput:
        req = state.request
        text = ""
        unused = 0  # tokens of this step after a stop string (several with speculative decoding)
        entries = None if req.sampling_params.logprobs is None else []
        for i, tok in enumerate(new_ids):
            if state.matcher.stopped:
                unused = len(new_ids) - i
                new_ids = new_ids[:i]
                break
            if finish_reason == "stop" and tok in state.stop_ids:
                continue  # the end token is not part of the answer
            text += state.matcher.feed(state.detok.add(tok))
            if entries is not None and logprobs is not None:  # one token a step: no drafts with logprobs
                entries.append(self._logprob_entry(tok, *logprobs))
            if req.grammar is not None:
                req.grammar.accept(tok)  # the mask allowed only what it accepts
        grammar_done = req.grammar is not None and req.grammar.is_terminated()
        if (state.matcher.stopped or grammar_done) and finish_reason is None:
            finish_reason = "stop"  # a stop string, or the grammar's end: end it here and free its blocks
            self.scheduler.abort_request(req.request_id)
        if finish_reason is not None:
            if not state.matcher.stopped:
                text += state.matcher.feed(state.detok.flush()) + state.matcher.flush()
            self._states.pop(req.request_id, None)
        completion = req.num_output_tokens - unused
        if finish_reason == "stop" and req.output_token_ids and req.output_token_ids[-1] in state.stop_ids:
            completion -= 1
        metrics = None
        if finish_reason is not None:
            now = time.monotonic()
            metrics = RequestMetrics(
                queue_s=req.queue_time,
                ttft_s=req.time_to_first_token,
                tpot_s=req.time_per_output_token if req.finish_time else _tpot(req, now),
                e2e_s=now - req.arrival_time,
                num_preemptions=req.num_preemptions,
                cached_tokens=state.cached_tokens or 0,
            )
        return RequestOutput(
            req.request_id,
            text,
            list(new_ids),
            finish_reason is not None,
            finish_reason,
            req.num_prompt_tokens,
            completion,
            metrics,
            logprobs=entries,
        )

    def _logprob_entry(self, token: int, logprob: float, top_ids: list[int], top_logprobs: list[float]) -> dict:
        """OpenAI's chat logprobs entry of one generated token."""

        def one(t: int, lp: float) -> dict:
            raw = self.tokenizer.token_bytes(t) if t < self.tokenizer.vocab_size else b""
            return {"token": raw.decode("utf-8", errors="replace"), "logprob": lp, "bytes": list(raw)}

        return {**one(token, logprob), "top_logprobs": [one(t, lp) for t, lp in zip(top_ids, top_logprobs)]}

    def score(self, token_ids, chunk: int = 128):
        """Teacher-forced logits [len, V] of ``token_ids`` through this engine's model, attention and KV
        cache (see ``ModelRunner.score``). Only on an idle engine; it empties the prefix cache, whose
        blocks the scoring overwrites."""
        self._clear_for_scoring()
        return self.runner.score(token_ids, chunk)

    def prompt_logits(self, prompt) -> np.ndarray:
        """float32 logits [V] of the token that would follow ``prompt`` (text or token ids, as
        ``encode`` takes them): the whole prompt in one prefill through this engine's model, attention
        and KV cache, as a request's first step computes them. For parity tests and quality evaluation;
        only on an idle engine (see ``score``). Raises ``RequestError`` for a prompt ``add_request``
        would refuse."""
        ids = self.encode(prompt)
        self.check_length(len(ids))
        self._clear_for_scoring()
        return self.runner.score(ids, len(ids), last_only=True)

    def _clear_for_scoring(self) -> None:
        if self.has_unfinished_requests() or not self.scheduler.kv_cache_manager.reset_prefix_cache():
            raise RuntimeError("scoring needs an idle engine")

    def stats(self) -> EngineStats:
        s = self.scheduler
        kv = s.kv_cache_manager
        return EngineStats(
            s.num_running,
            s.num_waiting,
            s.kv_cache_usage,
            s.num_preemptions_total,
            self.num_steps,
            self.num_blocks,
            kv.prefix_cache_queries,
            kv.prefix_cache_hits,
            s.proposer.num_draft_tokens if s.proposer else 0,
            s.proposer.num_accepted_tokens if s.proposer else 0,
            self.decode_steps,
            self.decode_seqs,
            self.decode_seconds,
            self._weight_bytes,
            self._weight_bits,
            kv.shared_prefix_queries,
            kv.shared_prefix_tokens,
            self.config.max_num_batched_tokens,
        )

    # ------------------------------------------------------------ offline convenience

    def generate(
        self,
        prompts: Sequence,
        sampling_params: SamplingParams | Sequence[SamplingParams] = SamplingParams(),
        progress: Callable[[RequestOutput], None] | None = None,
    ) -> list[RequestOutput]:
        """Run many prompts to completion with continuous batching; one final output per prompt, in order."""
        params = sampling_params if isinstance(sampling_params, (list, tuple)) else [sampling_params] * len(prompts)
        ids = [self.add_request(p, sp) for p, sp in zip(prompts, params)]
        texts: dict[str, list[str]] = {i: [] for i in ids}
        tokens: dict[str, list[int]] = {i: [] for i in ids}
        logprobs: dict[str, list[dict]] = {i: [] for i in ids}
        final: dict[str, RequestOutput] = {}
        while self.has_unfinished_requests():
            for o in self.step():
                texts[o.request_id].append(o.text)
                tokens[o.request_id].extend(o.token_ids)
                logprobs[o.request_id].extend(o.logprobs or ())
                if o.finished:
                    o.text, o.token_ids = "".join(texts[o.request_id]), tokens[o.request_id]
                    if o.logprobs is not None:
                        o.logprobs = logprobs[o.request_id]
                    final[o.request_id] = o
                    if progress:
                        progress(o)
        return [final[i] for i in ids]


def _tpot(req: Request, now: float) -> float | None:
    if req.first_token_time is None or req.num_output_tokens < 2:
        return None
    return (now - req.first_token_time) / (req.num_output_tokens - 1)
