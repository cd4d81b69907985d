"""Offline generation on an engine: many prompts to completion with continuous batching (``LLMEngine.generate``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runtime.api import RequestOutput, SamplingParams


def generate(
    engine,
    prompts: Sequence,
    sampling_params: SamplingParams | Sequence[SamplingParams] = SamplingParams(),
    progress: Callable[[RequestOutput], None] | None = None,
) -> list[RequestOutput]:
    """One final output per prompt, in order (text, token ids and log-probabilities joined); ``progress`` is
    called with each as it finishes. ``engine``: an ``LLMEngine`` (add_request, step, has_unfinished_requests)."""
    params = sampling_params if isinstance(sampling_params, (list, tuple)) else [sampling_params] * len(prompts)
    ids = [engine.add_request(p, sp) for p, sp in zip(prompts, params)]
    texts: dict[str, list[str]] = {i: [] for i in ids}
    tokens: dict[str, list[int]] = {i: [] for i in ids}
    logprobs: dict[str, list[dict]] = {i: [] for i in ids}
    final: dict[str, RequestOutput] = {}
    while engine.has_unfinished_requests():
        for o in engine.step():
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
