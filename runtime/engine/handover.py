"""Prefill/decode disaggregation's side of the engine (runtime/serving/disagg.py): the prefill-only requests
whose KV is exported when they finish, and the KV of prefilled requests waiting for the step that
admits them. A payload is checked against this engine (model, precision, KV layout) before it is taken.
"""

from __future__ import annotations

import dataclasses

from runtime.api import QUANTIZED_KV_DTYPE_NAMES, SamplingParams
from runtime.core.request import Request
from runtime.distributed.kv_transfer import KVTransferError, PrefilledKV
from runtime.distributed.kv_transfer import stage as stage_kv
from runtime.worker.model_runner import ModelRunner


class KVHandover:
    def __init__(self, runner: ModelRunner, fingerprint: str, kv_dtype: str):
        self.runner, self.fingerprint, self.kv_dtype = runner, fingerprint, kv_dtype
        self.exports: dict[str, int] = {}  # prefill-only request -> its prompt tokens found in the prefix cache
        self.imports: dict[str, PrefilledKV] = {}  # prefilled request -> its KV, until a step admits it

    def forget(self, request_id: str) -> None:
        self.exports.pop(request_id, None)
        self.imports.pop(request_id, None)

    @staticmethod
    def prefill_only(params: SamplingParams) -> SamplingParams:
        """A prefill-only request's parameters: one token sampled as ``params`` say; length and stop rules
        are the decode side's."""
        return dataclasses.replace(
            params, max_tokens=1, stop=(), stop_token_ids=(), ignore_eos=True, min_tokens=0, logprobs=None
        )

    def expect_export(self, request_id: str) -> None:
        """A prefill-only request: its KV leaves with its final output."""
        self.exports[request_id] = 0

    def hold(self, request_id: str, prefilled: PrefilledKV) -> None:
        """A prefilled request's KV, kept until the step that admits it (``write_imported``)."""
        self.imports[request_id] = prefilled

    def scheduled(self, new_request_ids, num_computed_tokens: dict[str, int]) -> None:
        """A step scheduled these requests for the first time: an exported one's prefix-cache hits."""
        for rid in new_request_ids:
            if rid in self.exports:
                self.exports[rid] = num_computed_tokens[rid]

    def export_if_done(self, request: Request, finished: bool, block_table: list[int]) -> PrefilledKV | None:
        """A finished prefill-only request's KV (``export``), else None."""
        return self.export(request, block_table) if finished and request.request_id in self.exports else None

    def check(self, p: PrefilledKV) -> None:
        """``KVTransferError`` unless ``p`` was computed by an engine like this one and fits its cache."""
        p.validate()
        if p.fingerprint != self.fingerprint:
            raise KVTransferError(
                f"the KV was computed by {p.fingerprint!r}; this engine is {self.fingerprint!r} "
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

    def write_imported(self, imported_kv_starts: dict[str, int], block_tables: dict[str, list[int]]) -> None:
        """The KV of prefilled requests this step admits, into their blocks (from ``start``: a prefix-cache
        hit already holds the rest)."""
        for rid, start in imported_kv_starts.items():
            p = self.imports.pop(rid)
            if start < p.num_tokens:
                self.runner.import_kv(block_tables[rid], start, p.num_tokens, p.staged or stage_kv(p))

    def export(self, request: Request, block_table: list[int]) -> PrefilledKV:
        """A finished prefill-only request's KV: its blocks were just freed but keep their contents until the
        next step hands them out, so it is read now."""
        k, v, ks, vs = self.runner.export_kv(block_table, request.num_prompt_tokens)
        return PrefilledKV(
            request.prompt_token_ids,
            request.output_token_ids[0],
            self.fingerprint,
            self.kv_dtype,
            k,
            v,
            ks,
            vs,
            num_cached_tokens=self.exports.pop(request.request_id),
        )
