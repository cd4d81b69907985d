"""One generation request and its sampling parameters: the scheduler's unit of work.

Data flow: the engine builds a ``Request`` (token ids from the tokenizer, ``SamplingParams`` from
the API call) and hands it to ``Scheduler.add_request``. From then on only the scheduler mutates it,
on the engine's step-loop thread: it advances ``num_computed_tokens``, appends sampled tokens to
``output_token_ids``, moves ``status`` through WAITING -> RUNNING (<-> PREEMPTED) -> FINISHED_*, and
stamps the times the metrics need (queue time, time to first token, time per output token).
Nothing here imports JAX or NumPy.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any

from runtime.api import SamplingParams, is_int


class RequestStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"  # back in the waiting queue, its KV freed; recomputed on re-admission
    FINISHED_STOPPED = "finished_stopped"  # EOS or a stop token
    FINISHED_LENGTH = "finished_length"  # max_tokens or max_model_len reached
    FINISHED_ABORTED = "finished_aborted"  # cancelled by the caller

    @property
    def is_finished(self) -> bool:
        return self in _FINISH_REASONS

    @property
    def finish_reason(self) -> str | None:
        """The OpenAI-style finish reason ("stop", "length", "abort"), None while unfinished."""
        return _FINISH_REASONS.get(self)


_FINISH_REASONS = {
    RequestStatus.FINISHED_STOPPED: "stop",
    RequestStatus.FINISHED_LENGTH: "length",
    RequestStatus.FINISHED_ABORTED: "abort",
}


@dataclass(eq=False)
class Request:
    """A prompt, its sampling parameters and everything generated for it so far.

    The one number the scheduler cares about is ``num_computed_tokens``: how many of
    ``all_token_ids`` already have their keys and values in the KV cache. Every step it catches
    up with ``num_tokens`` (a whole prompt, a chunk of one, or the one token sampled last step);
    when it has caught up, the step's logits yield the next token. There is no prefill or decode
    mode.

    Preemption frees the KV and resets ``num_computed_tokens`` to 0 but keeps ``output_token_ids``:
    on re-admission prompt and outputs are recomputed together, and no token is sampled until the
    count has caught up again.

    ``eq=False``: requests compare by identity; two requests with equal tokens are different work.
    """

    request_id: str
    prompt_token_ids: list[int]
    sampling_params: SamplingParams = field(default_factory=SamplingParams)
    eos_token_ids: frozenset[int] = frozenset()  # the model's end tokens (the tokenizer's set)
    # ``SamplingParams.structured``: its grammar matcher (runtime.structured.Matcher), owned by the step
    # thread; it has accepted exactly ``output_token_ids`` (a recompute after preemption samples nothing anew)
    grammar: Any = None
    arrival_time: float = field(default_factory=time.monotonic)

    output_token_ids: list[int] = field(default_factory=list, init=False)
    num_computed_tokens: int = field(default=0, init=False)
    status: RequestStatus = field(default=RequestStatus.WAITING, init=False)
    num_preemptions: int = field(default=0, init=False)
    first_scheduled_time: float | None = field(default=None, init=False)
    first_token_time: float | None = field(default=None, init=False)
    finish_time: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.request_id, str) or not self.request_id:
            raise ValueError(f"request_id must be a non-empty str, got {self.request_id!r}")
        self.prompt_token_ids = list(self.prompt_token_ids)
        if not self.prompt_token_ids:
            raise ValueError(f"request {self.request_id!r}: the prompt is empty")
        if not all(is_int(t) and t >= 0 for t in self.prompt_token_ids):
            raise ValueError(f"request {self.request_id!r}: prompt token ids must be ints >= 0")
        if not isinstance(self.sampling_params, SamplingParams):
            raise ValueError(
                f"request {self.request_id!r}: sampling_params must be SamplingParams, "
                f"got {type(self.sampling_params).__name__}"
            )
        self.eos_token_ids = frozenset(self.eos_token_ids)
        if not all(is_int(t) and t >= 0 for t in self.eos_token_ids):
            raise ValueError(f"request {self.request_id!r}: eos_token_ids must be ints >= 0")

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.output_token_ids)

    @property
    def num_tokens(self) -> int:
        """Prompt plus outputs so far: the target ``num_computed_tokens`` catches up with."""
        return len(self.prompt_token_ids) + len(self.output_token_ids)

    @property
    def all_token_ids(self) -> list[int]:
        return self.prompt_token_ids + self.output_token_ids

    def token_slice(self, start: int, end: int) -> list[int]:
        """``all_token_ids[start:end]`` without concatenating both lists every step."""
        n_prompt = len(self.prompt_token_ids)
        if start >= n_prompt:
            return self.output_token_ids[start - n_prompt : end - n_prompt]
        if end <= n_prompt:
            return self.prompt_token_ids[start:end]
        return self.prompt_token_ids[start:] + self.output_token_ids[: end - n_prompt]

    @property
    def is_finished(self) -> bool:
        return self.status.is_finished

    @property
    def finish_reason(self) -> str | None:
        return self.status.finish_reason

    # Metrics. Each is None until the events it spans have happened.

    @property
    def queue_time(self) -> float | None:
        """Seconds from arrival to first being scheduled."""
        if self.first_scheduled_time is None:
            return None
        return self.first_scheduled_time - self.arrival_time

    @property
    def time_to_first_token(self) -> float | None:
        """Seconds from arrival to the first output token (TTFT)."""
        if self.first_token_time is None:
            return None
        return self.first_token_time - self.arrival_time

    @property
    def time_per_output_token(self) -> float | None:
        """Mean seconds between output tokens after the first (TPOT); None before the finish or
        with fewer than 2 tokens."""
        if self.finish_time is None or self.first_token_time is None or self.num_output_tokens < 2:
            return None
        return (self.finish_time - self.first_token_time) / (self.num_output_tokens - 1)
