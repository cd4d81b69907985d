"""A request before the scheduler sees it: the prompt tokenized (text, token ids, or chat messages through
the model's chat template), its length checked against the context, its token ids against the vocabulary,
and its structured-output spec compiled into a grammar matcher. Everything here raises ``RequestError``
for this request alone; the engine keeps serving the others.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from runtime.api import RequestError, SamplingParams, StructuredOutput
from runtime.core.request import Request
from runtime.loading.tokenizer import Tokenizer


class InputProcessor:
    def __init__(self, tokenizer: Tokenizer, vocab_size: int, max_model_len: int):
        self.tokenizer, self.vocab_size, self.max_model_len = tokenizer, vocab_size, max_model_len
        self._grammars = None  # runtime.structured.GrammarCompiler, built on the first structured request

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
        if not all(isinstance(t, (int, np.integer)) and 0 <= t < self.vocab_size for t in prompt):
            raise RequestError(f"prompt token ids must be ints in [0, {self.vocab_size})")
        return [int(t) for t in prompt]

    def new_request(self, prompt, sampling_params: SamplingParams, request_id: str) -> Request:
        """The scheduler's ``Request`` for ``prompt`` (as ``encode`` takes it), checked and with its grammar."""
        try:
            prompt_ids = self.encode(prompt)
        except RequestError:
            raise
        except ValueError as exc:  # bad chat messages, template errors
            raise RequestError(str(exc)) from None
        self.check_length(len(prompt_ids), sampling_params.max_tokens)
        vocab = self.vocab_size
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

    def grammar_matcher(self, spec: StructuredOutput):
        """A fresh matcher of ``SamplingParams.structured`` (RequestError naming the field when llguidance
        cannot compile it). The compiler is built on first use (the tokenizer's preparation: 0.3 s for
        SmolLM2, 2 s for Gemma 3) and caches compiled grammars by spec."""
        from runtime.structured import GrammarCompiler

        if self._grammars is None:
            self._grammars = GrammarCompiler(self.tokenizer, vocab_size=self.vocab_size)
        try:
            return self._grammars.compile(spec).matcher()
        except ValueError as exc:
            raise RequestError(str(exc), "response_format" if spec.tool_mode is None else "tools") from None

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
