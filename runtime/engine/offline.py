"""Offline generation, one prompt at a time, as a client of ``LLMEngine``; and the ``python -m runtime.generate`` CLI.

In: a model (preset name or GGUF path), a prompt, sampling settings. Out: streamed text deltas and
``GenerationStats`` (token ids, finish reason, TTFT, decode speed).

    Generator(model, ...)   -> one LLMEngine sized for one request at a time: a single sequence, a token
                               budget of the whole context (a prompt prefills in one step), a KV cache
                               that holds one full-context request where that fits the engine's default
                               budget (else the engine's own sizing)
    stream(prompt_ids, sp)  -> add_request -> step() until the request finishes, yielding each
                               output's text delta
    prompt_logits(ids)      -> LLMEngine.prompt_logits: the next token's logits after the prompt

Tokenizing and the chat template, stop tokens and stop strings, incremental detokenizing, sampling
and the errors a request can meet (``runtime.api.RequestError``) are all the engine's. The one offline
rule on top: ``max_tokens`` is cut to the room the context leaves, so a long answer ends with
``finish=length`` at the end of the context instead of being refused. Runs on the calling thread.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import jax
import numpy as np

from runtime.api import (
    ATTENTION_BACKENDS,
    DTYPE_NAMES,
    INT4_GROUPS,
    WEIGHT_QUANT_MODES,
    EngineConfig,
    RequestError,
    SamplingParams,
)
from runtime.core.kv_sizing import DEFAULT_KV_CACHE_BYTES, KVShape, kv_bytes_per_block
from runtime.engine.llm_engine import LLMEngine
from runtime.loading.gguf import GGUFError, load_gguf
from runtime.loading.presets import ModelNotFoundError, resolve_gguf
from runtime.platform import configure_xla, resolve_dtype
from runtime.worker.attention import kv_lane_groups

log = logging.getLogger("runtime.generate")


@dataclass
class GenerationStats:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    ttft_s: float = 0.0
    decode_s: float = 0.0
    token_ids: list[int] = field(default_factory=list)  # the answer's tokens (an end token is not one)

    @property
    def decode_tokens_per_s(self) -> float:
        return (self.completion_tokens - 1) / self.decode_s if self.completion_tokens > 1 and self.decode_s else 0.0


class Generator:
    """One model behind an ``LLMEngine`` that serves one prompt at a time (``self.engine``)."""

    def __init__(
        self,
        model: str = "smollm2-135m",
        *,
        gguf_path: str | None = None,
        dtype: str | None = None,
        attention_backend: str = "auto",
        page_size: int = 16,
        max_model_len: int | None = None,
        weight_quant: str = "none",
        weight_quant_group: int = 64,
    ):
        configure_xla()
        if max_model_len is not None and max_model_len < 1:
            raise ValueError(f"max_model_len must be a positive number of tokens; got {max_model_len}")
        # Every setting is checked before the weights load; the lengths are set once the model's context is known.
        config = EngineConfig(
            model=model,
            gguf_path=gguf_path,
            dtype=dtype,
            attention_backend=attention_backend,
            block_size=page_size,
            max_num_seqs=1,
            enable_prefix_caching=False,
            weight_quant=weight_quant,
            weight_quant_group=weight_quant_group,
        )
        loaded = load_gguf(gguf_path or resolve_gguf(model))
        context = loaded.config.max_position_embeddings
        max_len = min(max_model_len or context, context)
        # One request of max_len tokens needs ceil(max_len / page) blocks, plus the null block.
        blocks = math.ceil(max_len / page_size) + 1
        # The cache as this platform's attention stores it (a TPU's rows padded to whole vregs).
        kv_shape = KVShape.of(loaded.config, kv_lane_groups(attention_backend))
        block_bytes = kv_bytes_per_block(kv_shape, resolve_dtype(dtype), page_size)
        config = dataclasses.replace(
            config,
            max_model_len=max_len,
            max_num_batched_tokens=max_len,
            num_blocks=blocks if blocks * block_bytes <= DEFAULT_KV_CACHE_BYTES else None,
        )
        self.engine = LLMEngine(config, loaded=loaded)

    @property
    def config(self):
        """The model's ``ModelConfig``."""
        return self.engine.model_config

    @property
    def tokenizer(self):
        return self.engine.tokenizer

    @property
    def params(self):
        """The parameters as served (device arrays in the serving dtype, quantized where asked)."""
        return self.engine.runner.params

    @property
    def max_model_len(self) -> int:
        return self.engine.max_model_len

    # ------------------------------------------------------------ inputs

    def encode_prompt(self, prompt: str, *, chat: bool = False, system: str | None = None) -> list[int]:
        """Token ids of ``prompt``, or of one user turn (after an optional system message) in the chat template."""
        if not prompt or not prompt.strip():
            raise RequestError("the prompt is empty")
        if chat:
            messages = [{"role": "system", "content": system}] if system else []
            messages.append({"role": "user", "content": prompt})
            return self.engine.encode(messages)
        return self.engine.encode(prompt)

    # ------------------------------------------------------------ generation

    def stream(
        self, prompt_ids: Sequence[int], sp: SamplingParams = SamplingParams(), stats: GenerationStats | None = None
    ) -> Iterator[str]:
        """Yield text deltas; fill ``stats`` (token ids, timings, finish reason) as it goes. Closing the
        iterator early aborts the request."""
        stats = stats if stats is not None else GenerationStats()
        prompt_ids = list(prompt_ids)
        room = self.engine.max_model_len - len(prompt_ids)
        sp = dataclasses.replace(sp, max_tokens=max(1, min(sp.max_tokens, room)))  # no room: the engine says so
        t0 = time.perf_counter()
        request_id = self.engine.add_request(prompt_ids, sp)
        stats.prompt_tokens = len(prompt_ids)
        token_ids: list[int] = []
        t_first = None
        finished = False
        try:
            while not finished and self.engine.has_unfinished_requests():
                for out in self.engine.step():  # this engine runs no other request
                    if t_first is None and out.token_ids:
                        t_first = time.perf_counter()
                        stats.ttft_s = t_first - t0
                    token_ids.extend(out.token_ids)
                    stats.completion_tokens = out.completion_tokens
                    if out.finished:
                        finished = True
                        stats.finish_reason = out.finish_reason
                        stats.token_ids = token_ids[: out.completion_tokens]  # less an end token
                        stats.decode_s = time.perf_counter() - t_first
                    if out.text:
                        yield out.text
        finally:
            if not finished:
                self.engine.abort_request(request_id)

    def generate(self, prompt_ids: Sequence[int], sp: SamplingParams = SamplingParams()) -> tuple[str, GenerationStats]:
        stats = GenerationStats()
        text = "".join(self.stream(prompt_ids, sp, stats))
        return text, stats

    def prompt_logits(self, prompt_ids: Sequence[int]) -> np.ndarray:
        """float32 logits [V] for the next token after the prompt (parity tests, quality evaluation)."""
        return self.engine.prompt_logits(list(prompt_ids))


# ---------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m runtime.generate", description="Generate text with a JAX model.")
    p.add_argument("--model", default="smollm2-135m", help="model preset (default: smollm2-135m)")
    p.add_argument("--gguf", help="load this GGUF file instead of a preset")
    p.add_argument("--prompt", required=True)
    p.add_argument("--chat", action="store_true", help="wrap the prompt as one user turn in the chat template")
    p.add_argument("--system", help="system message (with --chat)")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0 means greedy")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--seed", type=int)
    p.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    p.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", *sorted(DTYPE_NAMES)],
        help="weights and activations (auto: bfloat16 on an accelerator, float32 on CPU)",
    )
    p.add_argument(
        "--weight-quant",
        default="none",
        choices=WEIGHT_QUANT_MODES,
        help="weight-only quantization: int8 (per output channel) or int4 (groups; default none)",
    )
    p.add_argument("--weight-quant-group", type=int, default=64, choices=INT4_GROUPS, help="int4 group size")
    p.add_argument(
        "--attention-backend",
        default="auto",
        choices=ATTENTION_BACKENDS,
        help="auto: pallas_tpu on TPU, pallas_gpu on GPU, xla on CPU (runtime/worker/attention.py)",
    )
    p.add_argument("--max-model-len", type=int, help="cap the context length (default: the model's)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        sp = SamplingParams(
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            max_tokens=args.max_tokens,
            seed=args.seed,
            stop=tuple(args.stop),
        )
        t0 = time.perf_counter()
        gen = Generator(
            args.model,
            gguf_path=args.gguf,
            dtype=args.dtype,
            attention_backend=args.attention_backend,
            max_model_len=args.max_model_len,
            weight_quant=args.weight_quant,
            weight_quant_group=args.weight_quant_group,
        )
        load_s = time.perf_counter() - t0
        prompt_ids = gen.encode_prompt(args.prompt, chat=args.chat, system=args.system)
        stats = GenerationStats()
        for delta in gen.stream(prompt_ids, sp, stats):
            sys.stdout.write(delta)
            sys.stdout.flush()
        sys.stdout.write("\n")
        print(
            f"[{stats.prompt_tokens} prompt tokens, {stats.completion_tokens} generated, finish={stats.finish_reason}; "
            f"load {load_s:.1f}s, TTFT {stats.ttft_s * 1000:.0f} ms, decode {stats.decode_tokens_per_s:.1f} tok/s "
            f"on {jax.default_backend()}]",
            file=sys.stderr,
        )
        return 0
    except (RequestError, GGUFError, ModelNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
