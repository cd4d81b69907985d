"""Batch-1 generation and the ``python -m runtime.generate`` CLI.

In: a model (preset name or GGUF path), a prompt, sampling settings. Out: streamed text deltas.
Flow: tokenize (optionally through the chat template) -> one prefill step over the whole prompt
(padded to a power-of-two bucket) -> jitted decode steps of one token, each sampling on device ->
incremental detokenization (never splits a UTF-8 character) -> stop-string matching -> stdout.
Runs on the calling thread. The continuous-batching engine reuses the same model and step function.
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from runtime.worker.attention import BACKENDS, AttentionMetadata
from runtime.loading.gguf import GGUFError, load_gguf
from runtime.worker.model_runner import (
    DTYPES,
    StepInputs,
    allocate_kv_cache,
    enable_compilation_cache,
    make_step_fn,
    next_power_of_two,
    params_to_device,
)
from runtime.platform import configure_xla, resolve_dtype
from runtime.loading.presets import ModelNotFoundError, resolve_gguf
from runtime.quant.weights import WEIGHT_QUANT_MODES, quantize_params
from runtime.quant.weights import validate_mode as validate_weight_quant
from runtime.api import SamplingParams
from runtime.worker.sampling import SamplingArrays
from runtime.core.stopping import StopStringMatcher
from runtime.loading.tokenizer import IncrementalDetokenizer, Tokenizer

log = logging.getLogger("runtime.generate")


class GenerationError(ValueError):
    """A request that cannot be served as asked (empty prompt, too long, ...)."""


@dataclass
class GenerationStats:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    ttft_s: float = 0.0
    decode_s: float = 0.0
    token_ids: list[int] = field(default_factory=list)

    @property
    def decode_tokens_per_s(self) -> float:
        return (self.completion_tokens - 1) / self.decode_s if self.completion_tokens > 1 and self.decode_s else 0.0


class Generator:
    """Loads one model and generates for one prompt at a time."""

    def __init__(self, model: str = "smollm2-135m", *, gguf_path: str | None = None, dtype: str | None = None,
                 attention_backend: str = "auto", page_size: int = 16, max_model_len: int | None = None,
                 weight_quant: str = "none", weight_quant_group: int = 64):
        configure_xla()
        if max_model_len is not None and max_model_len < 1:
            raise GenerationError(f"max_model_len must be a positive number of tokens; got {max_model_len}")
        dtype = resolve_dtype(dtype)  # None / "auto": bfloat16 on an accelerator, float32 on CPU
        if dtype not in DTYPES:
            raise GenerationError(f"dtype must be auto or one of {', '.join(DTYPES)}; got {dtype!r}")
        try:
            validate_weight_quant(weight_quant, weight_quant_group)
        except ValueError as exc:
            raise GenerationError(str(exc)) from None
        path = Path(gguf_path) if gguf_path else resolve_gguf(model)
        loaded = load_gguf(path)
        self.config = loaded.config
        self.tokenizer = Tokenizer.from_gguf_metadata(loaded.metadata)
        self.dtype = DTYPES[dtype]
        self.page_size = page_size
        self.max_model_len = min(max_model_len if max_model_len is not None else self.config.max_position_embeddings,
                                 self.config.max_position_embeddings)
        self.params = params_to_device(quantize_params(loaded.params, weight_quant, weight_quant_group), self.dtype)
        self._step, self._logits = make_step_fn(self.config, attention_backend=attention_backend, dtype=self.dtype)

    # ------------------------------------------------------------ inputs

    def encode_prompt(self, prompt: str, *, chat: bool = False, system: str | None = None) -> list[int]:
        if not prompt or not prompt.strip():
            raise GenerationError("the prompt is empty")
        if chat:
            messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
            return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        return self.tokenizer.encode(prompt)

    def _check_length(self, prompt_ids: Sequence[int], max_tokens: int) -> int:
        if not prompt_ids:
            raise GenerationError("the prompt is empty")
        if len(prompt_ids) >= self.max_model_len:
            raise GenerationError(
                f"the prompt is {len(prompt_ids)} tokens; the model's context is {self.max_model_len} tokens "
                "and at least one must be left for the answer"
            )
        return min(max_tokens, self.max_model_len - len(prompt_ids))

    def _pages(self, num_tokens: int) -> int:
        return next_power_of_two(math.ceil(num_tokens / self.page_size))

    def _inputs(self, tokens, positions, kv_len, pages, logits_index, sp: SamplingParams, seed, index) -> StepInputs:
        page_ids = np.arange(1, pages + 1, dtype=np.int32)  # page 0 is the null page
        positions = np.asarray(positions, np.int32)
        n = len(positions)
        slots = page_ids[positions // self.page_size] * self.page_size + positions % self.page_size
        T = len(tokens)
        slot_mapping = np.zeros(T, np.int32)
        slot_mapping[:n] = slots
        pos = np.zeros(T, np.int32)
        pos[:n] = positions
        md = AttentionMetadata(
            slot_mapping=jnp.asarray(slot_mapping),
            kv_lens=jnp.asarray([kv_len], jnp.int32),
            page_indices=jnp.asarray(page_ids[None, :]),
            cu_q_lens=jnp.asarray([0, n], jnp.int32),
            num_seqs=jnp.asarray([1], jnp.int32),
        )
        sampling = SamplingArrays(
            temperature=jnp.asarray([sp.temperature], jnp.float32),
            top_p=jnp.asarray([sp.top_p], jnp.float32),
            top_k=jnp.asarray([sp.top_k], jnp.int32),
            seeds=jnp.asarray([seed], jnp.uint32),
            token_index=jnp.asarray([index], jnp.int32),
        )
        return StepInputs(jnp.asarray(tokens, jnp.int32), jnp.asarray(pos), md,
                          jnp.asarray([logits_index], jnp.int32), sampling)

    # ------------------------------------------------------------ generation

    def stream(self, prompt_ids: Sequence[int], sp: SamplingParams, stop: Sequence[str] = (),
               stats: GenerationStats | None = None) -> Iterator[str]:
        """Yield text deltas; fill ``stats`` (token ids, timings, finish reason) as it goes."""
        stats = stats if stats is not None else GenerationStats()
        prompt_ids = list(prompt_ids)
        max_tokens = self._check_length(prompt_ids, sp.max_tokens)
        stats.prompt_tokens = len(prompt_ids)
        seed = sp.seed if sp.seed is not None else random.getrandbits(32)
        pages = self._pages(len(prompt_ids) + max_tokens)
        kv = allocate_kv_cache(self.config, pages + 1, self.page_size, self.dtype)
        stop_ids = set() if sp.ignore_eos else set(self.tokenizer.stop_token_ids) | set(sp.stop_token_ids)
        detok = IncrementalDetokenizer(self.tokenizer)
        matcher = StopStringMatcher(stop)

        P = len(prompt_ids)
        T = next_power_of_two(P, 16)
        padded = np.zeros(T, np.int32)
        padded[:P] = prompt_ids
        t0 = time.perf_counter()
        token, kv = self._step(self.params, kv, self._inputs(padded, np.arange(P), P, pages, P - 1, sp, seed, 0))
        token = int(token[0])
        stats.ttft_s = time.perf_counter() - t0
        t_first = time.perf_counter()
        pos = P
        while True:
            stats.token_ids.append(token)
            stats.completion_tokens += 1
            if token in stop_ids:
                stats.finish_reason = "stop"
                stats.token_ids.pop()  # the stop token is not part of the answer
                stats.completion_tokens -= 1
                break
            delta = matcher.feed(detok.add(token))
            if delta:
                yield delta
            if matcher.stopped:
                stats.finish_reason = "stop"
                break
            if stats.completion_tokens >= max_tokens:
                stats.finish_reason = "length"
                break
            token, kv = self._step(self.params, kv, self._inputs(
                [token], [pos], pos + 1, pages, 0, sp, seed, stats.completion_tokens))
            token = int(token[0])
            pos += 1
        stats.decode_s = time.perf_counter() - t_first
        if not matcher.stopped:
            tail = matcher.feed(detok.flush()) + matcher.flush()
            if tail:
                yield tail

    def generate(self, prompt_ids: Sequence[int], sp: SamplingParams, stop: Sequence[str] = ()) -> tuple[str, GenerationStats]:
        stats = GenerationStats()
        text = "".join(self.stream(prompt_ids, sp, stop, stats))
        return text, stats

    def prompt_logits(self, prompt_ids: Sequence[int]) -> np.ndarray:
        """float32 logits [V] for the next token after the prompt (parity tests, quality evaluation)."""
        prompt_ids = list(prompt_ids)
        self._check_length(prompt_ids, 1)
        P = len(prompt_ids)
        T = next_power_of_two(P, 16)
        pages = self._pages(P)
        padded = np.zeros(T, np.int32)
        padded[:P] = prompt_ids
        kv = allocate_kv_cache(self.config, pages + 1, self.page_size, self.dtype)
        inputs = self._inputs(padded, np.arange(P), P, pages, P - 1, SamplingParams(), 0, 0)
        logits, _ = self._logits(self.params, kv, inputs)
        return np.asarray(logits[0])


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
    p.add_argument("--dtype", default="auto", choices=["auto", *sorted(DTYPES)],
                   help="weights and activations (auto: bfloat16 on an accelerator, float32 on CPU)")
    p.add_argument("--weight-quant", default="none", choices=WEIGHT_QUANT_MODES,
                   help="weight-only quantization: int8 (per output channel) or int4 (groups; default none)")
    p.add_argument("--weight-quant-group", type=int, default=64, choices=[32, 64, 128], help="int4 group size")
    p.add_argument("--attention-backend", default="auto", choices=BACKENDS,
                   help="auto: pallas_tpu on TPU, pallas_gpu on GPU, xla on CPU (runtime/worker/attention.py)")
    p.add_argument("--max-model-len", type=int, help="cap the context length (default: the model's)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        sp = SamplingParams(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k,
                            max_tokens=args.max_tokens, seed=args.seed)
        enable_compilation_cache()
        t0 = time.perf_counter()
        gen = Generator(args.model, gguf_path=args.gguf, dtype=args.dtype, attention_backend=args.attention_backend,
                        max_model_len=args.max_model_len, weight_quant=args.weight_quant,
                        weight_quant_group=args.weight_quant_group)
        load_s = time.perf_counter() - t0
        prompt_ids = gen.encode_prompt(args.prompt, chat=args.chat, system=args.system)
        stats = GenerationStats()
        for delta in gen.stream(prompt_ids, sp, args.stop, stats):
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
    except (GenerationError, GGUFError, ModelNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
