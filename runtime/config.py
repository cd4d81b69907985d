"""Model configuration, derived from a GGUF file's metadata (never hard-coded per model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

SUPPORTED_ARCHITECTURES = ("llama",)


class ConfigError(ValueError):
    pass


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
    # derived in __post_init__
    q_per_kv: int = field(init=False)

    def __post_init__(self) -> None:
        for key in ("vocab_size", "hidden_size", "intermediate_size", "num_layers", "num_heads",
                    "num_kv_heads", "head_dim", "max_position_embeddings"):
            if getattr(self, key) <= 0:
                raise ConfigError(f"model config: {key} must be positive, got {getattr(self, key)}")
        if self.num_heads % self.num_kv_heads:
            raise ConfigError(f"model config: num_heads {self.num_heads} is not a multiple of num_kv_heads {self.num_kv_heads}")
        if self.head_dim % 2:
            raise ConfigError(f"model config: head_dim {self.head_dim} must be even for rotary embeddings")
        object.__setattr__(self, "q_per_kv", self.num_heads // self.num_kv_heads)

    @classmethod
    def from_gguf_metadata(cls, meta: Mapping[str, Any], source: str = "GGUF file") -> "ModelConfig":
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
        )


# A tiny config of the Llama family for fast unit tests (random weights).
TINY_LLAMA = ModelConfig(
    architecture="llama",
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_layers=2,
    num_heads=4,
    num_kv_heads=2,
    head_dim=16,
    max_position_embeddings=512,
    rope_theta=10000.0,
    rms_norm_eps=1e-5,
    name="tiny-llama",
)
