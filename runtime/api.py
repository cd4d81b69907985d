"""The runtime's contract, with no JAX in it: what a caller (the gateway, a script, a test) hands the
engine and what it gets back. Everything here is plain Python, so ``gateway`` can import it without
loading JAX; the engine itself lives in ``runtime.engine``.

    SamplingParams -> EngineClient.generate(prompt_ids, params, request_id) -> RequestOutput ... (finished)
    EngineConfig   -> runtime.engine.LLMEngine(config)                      -> EngineStats
    RequestError   one request cannot be served as asked (the others are unaffected)
    PrefillHandover  a prefill-only request's final output: its KV for another engine to decode from

The names of the choices an ``EngineConfig`` takes (dtypes, KV dtypes, attention backends, weight
quantization) are defined here once; the modules that implement them check they cover every name.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

DTYPE_NAMES = ("float32", "bfloat16")  # weights and activations
QUANTIZED_KV_DTYPE_NAMES = ("int8", "fp8")  # 8-bit KV codes with a bfloat16 scale per token and kv head
KV_DTYPE_NAMES = (*DTYPE_NAMES, *QUANTIZED_KV_DTYPE_NAMES)
# auto picks per platform (runtime/worker/attention.py; on CPU the C++ kernel "cpu" when it builds, else "xla");
# pallas_interpret is the old name of pallas_gpu_interpret
ATTENTION_BACKENDS = (
    "auto",
    "xla",
    "cpu",
    "pallas",
    "pallas_gpu",
    "pallas_tpu",
    "pallas_gpu_interpret",
    "pallas_tpu_interpret",
    "pallas_interpret",
)
SPECULATIVE_METHODS = ("none", "ngram")
WEIGHT_QUANT_MODES = ("none", "int8", "int4", "gguf")  # gguf: the file's own blocks (runtime/quant/gguf_blocks.py)
INT4_GROUPS = (32, 64, 128)
DEFAULT_MEMORY_FRACTION = 0.9  # of the device's memory, weights + KV cache + working memory together


def check_memory_fraction(fraction: float) -> None:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(
            f"kv_cache_memory_fraction must be in (0, 1] (the share of the device's memory the engine "
            f"may use in all); got {fraction!r}"
        )


class ConfigError(ValueError):
    """A configuration is invalid (a model file's header, the gateway's YAML); the message names the key."""


def validate_weight_quant(mode: str, group: int) -> None:
    """ValueError naming the bad setting (``EngineConfig.weight_quant`` / ``weight_quant_group``)."""
    if mode not in WEIGHT_QUANT_MODES:
        raise ValueError(f"weight_quant must be one of {', '.join(WEIGHT_QUANT_MODES)}; got {mode!r}")
    if group not in INT4_GROUPS:  # checked whatever the mode, so a typo never waits for a mode switch
        raise ValueError(f"weight_quant_group must be one of {', '.join(map(str, INT4_GROUPS))}; got {group!r}")


@dataclass(frozen=True)
class Bound:
    """An interval a number must lie in, in annotated-types' words (``ge`` >=, ``gt`` >, ``le`` <=), so a
    pydantic ``Field(**bound.limits)`` declares the interval that ``SamplingParams`` checks."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    @property
    def limits(self) -> dict[str, float]:
        return {k: v for k, v in (("ge", self.ge), ("gt", self.gt), ("le", self.le)) if v is not None}

    def describe(self) -> str:
        lo = f"[{self.ge:g}" if self.ge is not None else f"({self.gt:g}" if self.gt is not None else "(-inf"
        hi = f"{self.le:g}]" if self.le is not None else "inf)"
        return f"{lo}, {hi}"

    def contains(self, x: float) -> bool:
        return (
            (self.ge is None or x >= self.ge) and (self.gt is None or x > self.gt) and (self.le is None or x <= self.le)
        )


# Sampling bounds, defined once: SamplingParams checks them and the gateway's request model
# (gateway/api/schemas.py) declares them, so its 400s and /openapi.json give the same numbers.
TEMPERATURE = Bound(ge=0.0)  # 0 is greedy
TOP_P = Bound(gt=0.0, le=1.0)  # 1 switches the filter off
TOP_K = Bound(ge=0)  # 0 switches the filter off
MAX_TOKENS = Bound(ge=1)
MIN_P = Bound(ge=0.0, le=1.0)  # 0 switches the filter off
PENALTY = Bound(ge=-2.0, le=2.0)  # presence_penalty, frequency_penalty (OpenAI's range); 0 is off
REPETITION_PENALTY = Bound(gt=0.0, le=10.0)  # 1 is off
LOGIT_BIAS = Bound(ge=-100.0, le=100.0)  # per token, added to its logit (OpenAI's range)
MIN_TOKENS = Bound(ge=0)
MAX_LOGPROBS = 20  # top_logprobs: at most this many alternatives per token (OpenAI's limit)


@runtime_checkable
class StructuredOutput(Protocol):
    """The shape a grammar-constrained answer must have (``SamplingParams.structured``). This contract names
    what the engine and the wire read; the one implementation, ``runtime.structured.StructuredSpec`` (frozen,
    hashable: it keys the grammar cache), is parsed once from OpenAI's request parts at the edge."""

    tool_mode: str | None  # None: a JSON answer; "auto" | "required" | "function": tool calls

    def grammar(self) -> str:
        """The llguidance grammar text the sampler enforces."""
        ...

    def to_json(self) -> str:
        """The wire form a runtime server reads back (``StructuredSpec.from_json``)."""
        ...


@dataclass(frozen=True)
class SamplingParams:
    """How to pick each next token. The defaults are greedy decoding of at most 16 tokens.

    ``temperature == 0`` means greedy (argmax); ``top_k == 0`` and ``top_p == 1`` switch those
    filters off. ``seed`` makes a sampled (temperature > 0) request reproducible.
    ``stop_token_ids`` end the request like the model's own end-of-sequence tokens do;
    ``ignore_eos`` switches off both kinds, so exactly ``max_tokens`` tokens come out (benchmarks
    use it), the same rule as ``runtime.generate``.

    Logit processing, in this order, on the device inside the step (``runtime.worker.sampling``):
    ``repetition_penalty`` (a token seen in the prompt or the output: a positive logit divided by it, a
    negative one multiplied), ``presence_penalty`` and ``frequency_penalty`` (OpenAI's: minus the
    penalty once for a token the output holds, minus the frequency penalty per occurrence),
    ``logit_bias`` ({token id: bias} added), ``min_tokens`` (the end tokens masked until that many came
    out); then greedy takes the argmax, or temperature, ``min_p`` (drop tokens less likely than min_p x
    the likeliest), ``top_k`` and ``top_p`` shape the distribution a token is drawn from.
    ``logprobs``: None, or return each token's log-probability and that many (0..20) likeliest
    alternatives, from the model's own distribution (before any of the processing above).
    ``structured``: None, or grammar-constrained decoding: a ``StructuredOutput``, in practice
    ``runtime.structured.StructuredSpec.from_openai(response_format, tools, tool_choice, ...)``; each
    token is drawn from those the grammar allows after every other step above, and the request ends
    when the grammar does.
    """

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 16
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None
    ignore_eos: bool = False
    stop: tuple[str, ...] = ()  # stop strings, matched on the detokenized text by the engine
    min_p: float = 0.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    logit_bias: tuple[tuple[int, float], ...] = ()  # a {token id: bias} mapping is accepted and stored sorted
    min_tokens: int = 0
    logprobs: int | None = None
    structured: StructuredOutput | None = None

    def __post_init__(self) -> None:
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            raise ValueError(f"temperature must be a number, got {self.temperature!r}")
        if not math.isfinite(self.temperature) or not TEMPERATURE.contains(self.temperature):
            raise ValueError(f"temperature must be finite and >= {TEMPERATURE.ge:g}, got {self.temperature}")
        if isinstance(self.top_p, bool) or not isinstance(self.top_p, (int, float)):
            raise ValueError(f"top_p must be a number, got {self.top_p!r}")
        if not TOP_P.contains(self.top_p):
            raise ValueError(f"top_p must be in ({TOP_P.gt:g}, {TOP_P.le:g}], got {self.top_p}")
        if not is_int(self.top_k) or not TOP_K.contains(self.top_k):
            raise ValueError(f"top_k must be an int >= {TOP_K.ge:g} (0 disables it), got {self.top_k!r}")
        if not is_int(self.max_tokens) or not MAX_TOKENS.contains(self.max_tokens):
            raise ValueError(f"max_tokens must be an int >= {MAX_TOKENS.ge:g}, got {self.max_tokens!r}")
        if isinstance(self.stop_token_ids, (str, bytes)):
            raise ValueError(f"stop_token_ids must be a sequence of ints, got {self.stop_token_ids!r}")
        try:
            stop_ids = tuple(self.stop_token_ids)
        except TypeError:
            raise ValueError(f"stop_token_ids must be a sequence of ints, got {self.stop_token_ids!r}") from None
        if not all(is_int(t) and t >= 0 for t in stop_ids):
            raise ValueError(f"stop_token_ids must be ints >= 0, got {stop_ids!r}")
        # A list is accepted for convenience but stored as a tuple so the params stay hashable.
        object.__setattr__(self, "stop_token_ids", stop_ids)
        if self.seed is not None and not is_int(self.seed):
            raise ValueError(f"seed must be an int or None, got {self.seed!r}")
        if not isinstance(self.ignore_eos, bool):
            raise ValueError(f"ignore_eos must be a bool, got {self.ignore_eos!r}")
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
        if not all(isinstance(x, str) and x for x in stop):
            raise ValueError(f"stop must be a string or a list of non-empty strings, got {self.stop!r}")
        object.__setattr__(self, "stop", stop)
        for name, bound in (
            ("min_p", MIN_P),
            ("presence_penalty", PENALTY),
            ("frequency_penalty", PENALTY),
            ("repetition_penalty", REPETITION_PENALTY),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            if not bound.contains(value):
                raise ValueError(f"{name} must be in {bound.describe()}, got {value}")
        object.__setattr__(self, "logit_bias", _logit_bias(self.logit_bias))
        if not is_int(self.min_tokens) or not MIN_TOKENS.contains(self.min_tokens):
            raise ValueError(f"min_tokens must be an int >= 0, got {self.min_tokens!r}")
        if self.min_tokens > self.max_tokens:
            raise ValueError(f"min_tokens ({self.min_tokens}) must be <= max_tokens ({self.max_tokens})")
        if self.logprobs is not None and (not is_int(self.logprobs) or not 0 <= self.logprobs <= MAX_LOGPROBS):
            raise ValueError(f"logprobs must be None or an int in [0, {MAX_LOGPROBS}], got {self.logprobs!r}")
        if self.structured is not None and not isinstance(self.structured, StructuredOutput):
            raise ValueError(f"structured must be None or a StructuredSpec, got {self.structured!r}")

    @property
    def is_greedy(self) -> bool:
        return self.temperature == 0.0

    @property
    def needs_history(self) -> bool:
        """Whether sampling reads this request's tokens so far (penalties) or per-token settings (a bias,
        the end tokens to hold back): the engine keeps a row of device state for it while it runs."""
        return bool(
            self.presence_penalty
            or self.frequency_penalty
            or self.repetition_penalty != 1.0
            or self.logit_bias
            or self.min_tokens
        )


def _logit_bias(value) -> tuple[tuple[int, float], ...]:
    items = value.items() if isinstance(value, dict) else value
    try:
        pairs = [(k, v) for k, v in items]
    except (TypeError, ValueError):
        raise ValueError(f"logit_bias must map token ids to numbers, got {value!r}") from None
    for k, v in pairs:
        if not is_int(k) or k < 0:
            raise ValueError(f"logit_bias: token ids must be ints >= 0, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not LOGIT_BIAS.contains(v):
            raise ValueError(
                f"logit_bias: the bias of token {k} must be a number in {LOGIT_BIAS.describe()}, got {v!r}"
            )
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError("logit_bias: a token id appears twice")
    return tuple(sorted((k, float(v)) for k, v in pairs))


def is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class RequestError(ValueError):
    """This request cannot be served as asked; the message says why and ``param`` (when known) names the
    request field at fault. Other requests are unaffected."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class EngineConfig:
    model: str = "smollm2-135m"
    gguf_path: str | None = None
    # Weights and activations: float32 | bfloat16; None (or "auto"): bfloat16 on an accelerator (TPU, GPU),
    # float32 on CPU (runtime/platform.py), decided at engine start.
    dtype: str | None = None
    # KV cache storage, default dtype: float32 | bfloat16, or int8 | fp8 (float8_e4m3fn) codes with one bfloat16
    # scale per token and kv head (runtime/quant/kv.py); the block count follows from the budget either way.
    kv_dtype: str | None = None
    # auto | xla | cpu | pallas | pallas_gpu | pallas_tpu | pallas_gpu_interpret | pallas_tpu_interpret (runtime/worker/attention.py)
    attention_backend: str = "auto"
    block_size: int = 16
    # The KV cache's size, first given wins: num_blocks; kv_cache_bytes (a budget, the block count follows);
    # on an accelerator, kv_cache_memory_fraction x the device's memory minus what is in use once the weights
    # loaded (as vLLM's gpu_memory_utilization); on CPU (no memory stats), 256 MiB. What is in use includes
    # other engines on the same device (several tiers in one gateway process): there the fractions add up,
    # the engine started last taking the largest.
    kv_cache_bytes: int | None = None
    num_blocks: int | None = None
    kv_cache_memory_fraction: float = DEFAULT_MEMORY_FRACTION
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 256
    max_model_len: int = 2048
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = True  # share the KV of full prompt blocks seen before
    compilation_cache: bool = True
    # A server's warm-up (LocalEngine.start): compile the largest and the one-token bucket, report ready, and
    # compile the other buckets on a background thread (steps pad to a compiled bucket meanwhile). False:
    # every bucket before ready.
    background_compile: bool = True
    # Warm-up also runs each program it compiled once, on dummy inputs (their writes go to the null page):
    # XLA:CPU's first run of a step program costs 0.1-1.5 s more than the next (SmolLM2 int8, prefill
    # buckets of 5-200 tokens: 154 vs 88 ms up to 1,919 vs 463 ms), which otherwise lands on the first
    # request of each shape. Off by default: it adds those seconds to every start.
    prime_programs: bool = False
    # Weight-only quantization of the loaded parameters (runtime/quant/weights.py): none | int8 (a scale per
    # output channel) | int4 (a scale per weight_quant_group input columns: 32, 64 or 128).
    weight_quant: str = "none"
    weight_quant_group: int = 64
    # CPU, float32, weight_quant none: hold the weights row-major and run products of up to 16 rows through the
    # C++ kernel (runtime/quant/cpu.py dense_matmul; XLA's own dot is 2x slower there). Same weights.
    dense_kernel: bool = True
    # Split the model over this many devices (runtime/distributed/sharding.py: heads, MLP columns, KV cache by kv head).
    tensor_parallel: int = 1
    # Speculative decoding (runtime/core/speculative.py): none | ngram (prompt lookup: drafts are the tokens
    # that followed the latest earlier occurrence of the last prompt_lookup_max..prompt_lookup_min tokens);
    # num_speculative_tokens drafts per request per step, verified in the same ragged step.
    speculative: str = "none"
    num_speculative_tokens: int = 3
    prompt_lookup_min: int = 2
    prompt_lookup_max: int = 4

    def __post_init__(self) -> None:
        if self.dtype is not None and self.dtype != "auto" and self.dtype not in DTYPE_NAMES:
            raise ValueError(f"dtype must be auto or one of {', '.join(DTYPE_NAMES)}; got {self.dtype!r}")
        if self.kv_dtype is not None and self.kv_dtype not in KV_DTYPE_NAMES:
            raise ValueError(f"kv_dtype must be one of {', '.join(KV_DTYPE_NAMES)}; got {self.kv_dtype!r}")
        if self.attention_backend not in ATTENTION_BACKENDS:  # whether it runs on this platform: at engine start
            raise ValueError(
                f"attention_backend must be one of {', '.join(ATTENTION_BACKENDS)}; got {self.attention_backend!r}"
            )
        if self.speculative not in SPECULATIVE_METHODS:
            raise ValueError(f"speculative must be one of {', '.join(SPECULATIVE_METHODS)}; got {self.speculative!r}")
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ValueError(
                f"prompt_lookup_min ({self.prompt_lookup_min}) must be <= prompt_lookup_max ({self.prompt_lookup_max})"
            )
        for name in (
            "block_size",
            "max_num_seqs",
            "max_num_batched_tokens",
            "max_model_len",
            "tensor_parallel",
            "num_speculative_tokens",
            "prompt_lookup_min",
            "prompt_lookup_max",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)}")
        if self.kv_cache_bytes is not None and self.kv_cache_bytes < 1:
            raise ValueError(
                f"kv_cache_bytes must be > 0 (or left out: sized from the device); got {self.kv_cache_bytes}"
            )
        if self.num_blocks is not None and self.num_blocks < 2:
            raise ValueError(f"num_blocks must be >= 2 (block 0 is the null block); got {self.num_blocks}")
        check_memory_fraction(self.kv_cache_memory_fraction)
        validate_weight_quant(self.weight_quant, self.weight_quant_group)


class PrefillHandover(Protocol):
    """A finished prefill, handed to another engine (prefill/decode disaggregation): the prompt, its first
    sampled token and its KV. This contract names what a caller may read without JAX or NumPy; the one
    implementation, ``runtime.distributed.kv_transfer.PrefilledKV``, also holds the KV arrays and crosses a
    wire (``encode_prefilled``)."""

    prompt_token_ids: list[int]
    first_token: int
    fingerprint: str  # model file, dtype, KV dtype, weight quantization: the receiver refuses another
    kv_dtype: str  # the engine's KV format name: float32 | bfloat16 | int8 | fp8
    num_cached_tokens: int  # prompt tokens the prefill side found in its own prefix cache (info)

    @property
    def num_tokens(self) -> int: ...

    @property
    def nbytes(self) -> int: ...


@dataclass
class RequestMetrics:
    """What the engine measured of one request, on its final output (seconds; None: not measured, e.g. no
    second token for a time per output token). ``to_dict``/``from_dict``: the runtime server's wire form."""

    queue_s: float | None = None  # arrival -> first scheduled
    ttft_s: float | None = None  # arrival -> first token
    tpot_s: float | None = None  # mean time per output token after the first
    e2e_s: float | None = None  # arrival -> finished
    num_preemptions: int = 0
    cached_tokens: int = 0  # prompt tokens found in the prefix cache

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RequestMetrics:
        """Known keys only (a newer server may send more); raises ValueError for a value of the wrong kind.
        Each field's kind comes from its annotation: a count (``int``) must be a whole number."""
        hints = typing.get_type_hints(cls)
        kw = {}
        for f in dataclasses.fields(cls):
            v = d.get(f.name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"metrics.{f.name} must be a number, got {v!r}")
            if hints[f.name] is int:
                if v != int(v):
                    raise ValueError(f"metrics.{f.name} must be a whole number, got {v!r}")
                kw[f.name] = int(v)
            else:
                kw[f.name] = float(v)
        return cls(**kw)


@dataclass
class RequestOutput:
    request_id: str
    text: str  # new text since the previous output of this request
    token_ids: list[int]  # new tokens
    finished: bool = False
    finish_reason: str | None = None  # "stop" | "length" | "abort"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    metrics: RequestMetrics | None = None  # on the final output
    prefilled: PrefillHandover | None = None  # the final output of a prefill-only request: its KV to hand over
    # With SamplingParams.logprobs: one OpenAI chat logprobs entry per token of ``text`` ({"token", "logprob",
    # "bytes", "top_logprobs": [{"token", "logprob", "bytes"}, ...]}); None otherwise.
    logprobs: list[dict] | None = None
    replica: str | None = None  # which replica of a tier produced it (gateway.backends.replicas labels it)


@dataclass(frozen=True)
class EngineStats:
    num_running: int
    num_waiting: int
    kv_cache_usage: float
    num_preemptions_total: int
    num_steps: int
    num_blocks: int
    prefix_cache_queries: int = 0  # prompt tokens looked up in the prefix cache
    prefix_cache_hits: int = 0  # of which found
    spec_draft_tokens: int = 0  # speculative decoding: draft tokens verified
    spec_accepted_tokens: int = 0  # of which kept
    decode_steps: int = 0  # steps that only decoded (one token per running sequence, no prompt in them)
    decode_seqs: int = 0  # sequences in those steps, summed (/ decode_steps: the mean decode batch)
    decode_seconds: float = 0.0  # wall time of those steps, summed (/ decode_steps: the mean decode step)
    weight_bytes: int = 0  # the model's weights in memory: what every decode step reads at least once
    weight_bits: int = 0  # bits a weight as served: 32 / 16 (float), 8 (int8), 4 (int4); 0: the file's mixed blocks
    shared_prefix_queries: int = 0  # prompt tokens admitted, prefix caching on or off
    shared_prefix_tokens: int = 0  # of which in leading full blocks an earlier prompt began with too
    max_num_batched_tokens: int = 0  # the step's token budget: the prefill chunk a decoding sequence waits behind


class EngineClient(Protocol):
    """What serves requests: ``runtime.engine.AsyncLLMEngine`` in-process, or a runtime server over HTTP
    (``gateway.backends.remote``) speaking the same contract."""

    def generate(
        self, prompt: Sequence[int], sampling_params: SamplingParams = ..., request_id: str | None = None
    ) -> AsyncIterator[RequestOutput]: ...

    def abort(self, request_id: str) -> None: ...
