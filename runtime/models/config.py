"""Model configuration, derived from a GGUF file's metadata (never hard-coded per model).

Where a GGUF file leaves a value out because llama.cpp hard-codes it per architecture (Gemma 3's
local RoPE base, its every-6th-layer-global pattern, its attention scale), the value is set here from
the same rule llama.cpp applies (``src/llama-model.cpp``, ``LLM_ARCH_GEMMA3``), so that both read the
file the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runtime.api import ConfigError

SUPPORTED_ARCHITECTURES = ("llama", "gemma3")

# Gemma's turn format: the fallback chat template of a Gemma 3 file that carries none (the
# pretrained 270M does not). The system message, if any, is folded into the first user turn, as
# in Google's instruction-tuned templates. Stops: <end_of_turn> (see runtime.loading.tokenizer) and <eos>.
GEMMA_TURN_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set first_user_prefix = messages[0]['content'] + '\n\n' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}"
    "{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)

# Chat templates for files of an architecture that carry no ``tokenizer.chat_template``.
FALLBACK_CHAT_TEMPLATES = {"gemma3": GEMMA_TURN_TEMPLATE}

# llama.cpp (LLM_ARCH_GEMMA3): with a sliding window, every 6th layer is global and the local layers
# use RoPE base 10,000 (the file's rope.freq_base is the global layers' base).
GEMMA3_SLIDING_WINDOW_PATTERN = 6
GEMMA3_ROPE_LOCAL_THETA = 10000.0


@dataclass(frozen=True)
class ModelConfig:
    architecture: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_position_embeddings: int
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    tie_word_embeddings: bool = True
    name: str = ""
    # Local attention (Gemma 3): keys per query, itself included, on the local layers; None: none.
    sliding_window: int | None = None
    # Every Nth layer (i + 1) % N == 0 is global, the others local; None: all local (Mistral-style).
    sliding_window_pattern: int | None = None
    rope_local_theta: float | None = None  # RoPE base of the local layers; None: rope_theta
    query_pre_attn_scalar: float | None = None  # softmax scale = this ** -0.5; None: head_dim
    attn_logit_softcap: float | None = None  # scores -> cap * tanh(scores / cap); None: off
    final_logit_softcap: float | None = None  # logits -> cap * tanh(logits / cap); None: off
    embedding_multiplier: float = 1.0  # token embeddings are scaled by this (Gemma: sqrt(hidden))
    # derived in __post_init__
    q_per_kv: int = field(init=False)
    attn_scale: float = field(init=False)
    layer_sliding_windows: tuple[int | None, ...] = field(init=False)  # per layer: window or None
    layer_rope_thetas: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        for key in (
            "vocab_size",
            "hidden_size",
            "intermediate_size",
            "num_layers",
            "num_heads",
            "num_kv_heads",
            "head_dim",
            "max_position_embeddings",
        ):
            if getattr(self, key) <= 0:
                raise ConfigError(f"model config: {key} must be positive, got {getattr(self, key)}")
        if self.num_heads % self.num_kv_heads:
            raise ConfigError(
                f"model config: num_heads {self.num_heads} is not a multiple of num_kv_heads {self.num_kv_heads}"
            )
        if self.head_dim % 2:
            raise ConfigError(f"model config: head_dim {self.head_dim} must be even for rotary embeddings")
        if self.sliding_window is not None and self.sliding_window < 1:
            raise ConfigError(f"model config: sliding_window must be >= 1 or None, got {self.sliding_window}")
        if self.sliding_window_pattern is not None and self.sliding_window_pattern < 1:
            raise ConfigError(
                f"model config: sliding_window_pattern must be >= 1 or None, got {self.sliding_window_pattern}"
            )
        for key in ("attn_logit_softcap", "final_logit_softcap", "query_pre_attn_scalar"):
            value = getattr(self, key)
            if value is not None and not value > 0:
                raise ConfigError(f"model config: {key} must be positive or None, got {value}")
        object.__setattr__(self, "q_per_kv", self.num_heads // self.num_kv_heads)
        object.__setattr__(self, "attn_scale", float(self.query_pre_attn_scalar or self.head_dim) ** -0.5)
        local = [
            self.sliding_window is not None
            and (self.sliding_window_pattern is None or (i + 1) % self.sliding_window_pattern != 0)
            for i in range(self.num_layers)
        ]
        object.__setattr__(self, "layer_sliding_windows", tuple(self.sliding_window if l else None for l in local))
        local_theta = self.rope_theta if self.rope_local_theta is None else self.rope_local_theta
        object.__setattr__(self, "layer_rope_thetas", tuple(local_theta if l else self.rope_theta for l in local))

    @classmethod
    def from_gguf_metadata(cls, meta: Mapping[str, Any], source: str = "GGUF file") -> ModelConfig:
        arch = meta.get("general.architecture")
        if arch not in SUPPORTED_ARCHITECTURES:
            raise ConfigError(
                f"{source}: unsupported model architecture {arch!r} (supported: {', '.join(SUPPORTED_ARCHITECTURES)})"
            )

        def req(key: str):
            full = f"{arch}.{key}"
            if full not in meta:
                raise ConfigError(f"{source}: metadata key {full!r} is missing")
            return meta[full]

        hidden = int(req("embedding_length"))
        heads = int(req("attention.head_count"))
        kv_heads = int(meta.get(f"{arch}.attention.head_count_kv", heads))
        head_dim = int(meta.get(f"{arch}.attention.key_length", hidden // heads))
        vocab = meta.get(f"{arch}.vocab_size")
        if vocab is None:
            vocab = len(meta.get("tokenizer.ggml.tokens", ()))
        extra = _gemma3_fields(meta, source, hidden, heads, head_dim) if arch == "gemma3" else {}
        return cls(
            architecture=arch,
            vocab_size=int(vocab),
            hidden_size=hidden,
            intermediate_size=int(req("feed_forward_length")),
            num_layers=int(req("block_count")),
            num_heads=heads,
            num_kv_heads=kv_heads,
            head_dim=head_dim,
            max_position_embeddings=int(req("context_length")),
            rope_theta=float(meta.get(f"{arch}.rope.freq_base", 10000.0)),
            rms_norm_eps=float(req("attention.layer_norm_rms_epsilon")),
            tie_word_embeddings=True,  # refined by the loader: False when output.weight exists
            name=str(meta.get("general.name", "")),
            **extra,
        )


def _gemma3_fields(meta: Mapping[str, Any], source: str, hidden: int, heads: int, head_dim: int) -> dict[str, Any]:
    """Gemma 3's extras, read as llama.cpp reads them (it hard-codes what the file leaves out)."""
    arch = "gemma3"
    value_length = int(meta.get(f"{arch}.attention.value_length", head_dim))
    if value_length != head_dim:
        raise ConfigError(f"{source}: {arch}.attention.value_length {value_length} != key_length {head_dim}")
    scaling = str(meta.get(f"{arch}.rope.scaling.type", "none"))
    if scaling != "none" and float(meta.get(f"{arch}.rope.scaling.factor", 1.0)) != 1.0:
        raise ConfigError(f"{source}: RoPE scaling {scaling!r} is not supported (Gemma 3 4B and larger use it)")
    window = int(meta.get(f"{arch}.attention.sliding_window", 0)) or None
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern", GEMMA3_SLIDING_WINDOW_PATTERN)
    if not isinstance(pattern, int):
        raise ConfigError(
            f"{source}: {arch}.attention.sliding_window_pattern {pattern!r}: only an integer is supported"
        )
    block_count = int(meta[f"{arch}.block_count"])

    def cap(key: str) -> float | None:  # absent or 0: off
        return float(meta[key]) or None if key in meta else None

    return dict(
        sliding_window=window,
        sliding_window_pattern=int(pattern) if window else None,
        rope_local_theta=float(meta.get(f"{arch}.rope.freq_base_swa", GEMMA3_ROPE_LOCAL_THETA)),
        # llama.cpp: 1/sqrt(hidden / heads) for the 27B (62 layers), 1/sqrt(head_dim) otherwise.
        query_pre_attn_scalar=float(hidden // heads if block_count == 62 else head_dim),
        attn_logit_softcap=cap(f"{arch}.attn_logit_softcapping"),
        final_logit_softcap=cap(f"{arch}.final_logit_softcapping"),
        embedding_multiplier=float(hidden) ** 0.5,
    )
