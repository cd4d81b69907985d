"""What the engine counts as it steps, and the ``EngineStats`` snapshot built from it and the scheduler."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.api import EngineStats
from runtime.core.scheduler import Scheduler, SchedulerOutput


@dataclass
class StepCounters:
    weight_bytes: int  # the model's weights in memory: what every decode step reads at least once
    weight_bits: int
    num_steps: int = 0  # steps that scheduled anything
    decode_steps: int = 0  # decode-only steps (one token per running sequence, no prompt in them)
    decode_seqs: int = 0  # their sequences, summed
    decode_seconds: float = 0.0  # their wall time: the advisor's step time against the weights' read

    def stepped(self, out: SchedulerOutput, seconds: float) -> None:
        """Count one executed step; ``seconds``: the runner's time for it."""
        if out.is_empty:
            return
        self.num_steps += 1
        decode_only = not (out.scheduled_new_reqs or out.scheduled_resumed_reqs)
        if decode_only and out.total_num_scheduled_tokens == len(out.num_scheduled_tokens):
            self.decode_steps += 1
            self.decode_seqs += len(out.num_scheduled_tokens)
            self.decode_seconds += seconds

    def stats(self, s: Scheduler, num_blocks: int, max_num_batched_tokens: int) -> EngineStats:
        kv = s.kv_cache_manager
        return EngineStats(
            s.num_running,
            s.num_waiting,
            s.kv_cache_usage,
            s.num_preemptions_total,
            self.num_steps,
            num_blocks,
            kv.prefix_cache_queries,
            kv.prefix_cache_hits,
            s.proposer.num_draft_tokens if s.proposer else 0,
            s.proposer.num_accepted_tokens if s.proposer else 0,
            self.decode_steps,
            self.decode_seqs,
            self.decode_seconds,
            self.weight_bytes,
            self.weight_bits,
            kv.shared_prefix_queries,
            kv.shared_prefix_tokens,
            max_num_batched_tokens,
        )
