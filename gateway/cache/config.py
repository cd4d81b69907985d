"""The semantic cache's settings (``cache:`` in configs/gateway.yaml), validated once.

In: a YAML/JSON mapping (``CacheConfig.from_mapping``) or keywords. Out: a frozen ``CacheConfig`` whose every
error names its key (``cache.<key>``), with the cosine and checker thresholds resolved: set by hand, or
chosen from the calibration table under the operator's bound on false hits (``max_false_hit_rate``,
``gateway/cache/calibration.py``). Pure: no model, store or thread is touched here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from gateway.cache.checker import CHECKERS
from gateway.cache.scope import CONVERSATION_MODES

SAMPLED_POLICIES = ("never", "seeded", "always")


@dataclass(frozen=True)
class CacheConfig:
    """Validated once (``__post_init__``); every error names the key (``cache.<key>``)."""

    enabled: bool = True
    # The operator's bound on the share of lookups of different-answer look-alikes that hit, per kind
    # of scope ("single", "conversation"; a number sets both). The thresholds below, when left unset,
    # come from the calibration table (gateway/cache/calibration.py): the highest recall whose one-sided
    # 95% Clopper-Pearson upper bound on calibration false hits is within it. A bound the table cannot
    # support is a start-up error. Conversations under conversation_match "exact" need no thresholds.
    max_false_hit_rate: Any = 0.01
    calibration: str = ""  # the table (default: gateway/cache/models/calibration.json)
    # Cosine similarity a candidate needs before the checker reads it, and the checker's score it needs,
    # for single questions and for conversations. None: from the calibration under the bound; a number
    # overrides it (the bound is then not guaranteed, and ``threshold_source`` says so).
    threshold: float | None = None
    checker_threshold: float | None = None
    conversation_threshold: float | None = None
    conversation_checker_threshold: float | None = None
    # Conversations: cosine the assistant turns before the two follow-ups need (0: not compared).
    conversation_reply_threshold: float = 0.6
    # "exact": a conversation hits only the same conversation, every turn as sent (the default: one API
    # key often serves many end users, and an assistant turn can carry one user's account details).
    # "semantic": keyed by all user turns and the conversation's facts (gateway/cache/scope.py).
    conversation_match: str = "exact"
    guard: bool = True  # run the precision checker (False: every candidate above the threshold hits)
    checker: str = "cross_encoder"  # "cross_encoder" | "numbers" | "none" (gateway/cache/checker.py)
    # The cross-encoder's ONNX file(s), "a.onnx,b.onnx" for an ensemble (empty: the shipped judge,
    # gateway/cache/models/checker.onnx + checker_b.onnx). Thresholds still come from the calibration
    # table, which was counted for the shipped judge: recalibrate (scripts/calibrate_cache.py) for another.
    checker_model: str = ""
    checker_threads: int = 1
    checker_reads_replies: bool = True  # conversations: the checker also reads the assistant turns
    hnsw_threshold: int = 2048  # a scope's index switches from exact (flat) search to HNSW past this size
    ttl_seconds: float = 7 * 24 * 3600.0
    max_entries: int = 100_000
    store: str = "file"  # "file" | "redis"
    path: str = "~/.cache/jaxserve/cache.jsonl"
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "jaxserve:cache:"
    redis_timeout_s: float = 0.5
    redis_retry_s: float = 1.0  # circuit-breaker pause after a Redis failure
    # Requests with temperature > 0: never cache them, cache them only when a seed makes them
    # reproducible, or always (serve one sample to everyone who asks the same).
    cache_sampled: str = "seeded"
    default_temperature: float = 1.0  # the temperature of a request that does not give one (OpenAI: 1)
    top_k: int = 4  # candidates the guard may look at
    semantic_max_chars: int = 1000  # longer questions use the exact path only (MiniLM reads 256 tokens)
    embed_max_batch: int = 32
    # 0: a lone lookup does not wait for company; lookups that arrive while a pass runs form the next batch.
    embed_max_wait_ms: float = 0.0
    embed_threads: int = 1
    embed_quantize: str = "none"  # torch backend: "int8" for dynamic int8 MiniLM
    embed_backend: str = "onnx"  # MiniLM as int8 ONNX (gateway/cache/onnx_models.py); "torch": sentence-transformers
    # Live verification (gateway/cache/verify.py): this share of hits, and each scope's first
    # ``verify_first`` hits, are answered again by the model in the background and compared.
    verify_share: float = 0.02
    verify_first: int = 20
    verify_answer_threshold: float = 0.85  # answers' cosine that counts as the same answer
    verify_max_pending: int = 8  # queued verifications; a full queue drops (never waits)
    verify_workers: int = 1
    verify_min_window: int = 20  # verified hits of a scope before its estimate may tighten it
    # Sampled hits (temperature > 0): a fresh sample differs from the served one by design, so comparing
    # them measures sampling as much as the cache; off by default (counted as skipped_sampled).
    verify_sampled: bool = False
    # Learning (gateway/cache/learn.py): a miss whose best candidate has cosine >= learn_floor is labelled
    # off the request path (the model's fresh answer against the candidate's stored one), and the
    # thresholds move below the calibrated ones where those labels bound the added region's false hits.
    learn: bool = False
    learn_floor: float = 0.5
    learn_window: int = 5000  # the last N labels of a kind the refit reads
    learn_refit_every: int = 25
    learn_max_pending: int = 64  # queued near-misses; a full queue drops (never waits)
    learn_verify_share: float = 0.25  # hits served only thanks to learned thresholds, verified (labels)
    flush_interval_s: float = 1.0  # FileStore write debounce
    purge_interval_s: float = 60.0  # expired-entry sweep

    def __post_init__(self) -> None:
        def bad(key: str, why: str) -> ValueError:
            return ValueError(f"cache.{key}: {why}, got {getattr(self, key)!r}")

        for key in ("enabled", "guard", "checker_reads_replies", "verify_sampled", "learn"):
            if not isinstance(getattr(self, key), bool):
                raise bad(key, "must be true or false")
        if self.conversation_match not in CONVERSATION_MODES:
            raise bad("conversation_match", f"must be one of {', '.join(CONVERSATION_MODES)}")
        if not isinstance(self.checker_model, str):
            raise bad("checker_model", "must be a file path, or paths joined by ',' (empty: the shipped judge)")
        if not isinstance(self.calibration, str):
            raise bad("calibration", "must be a file path (empty: the shipped table)")
        for key in ("conversation_reply_threshold",):
            if not _is_number(getattr(self, key)) or not 0.0 <= getattr(self, key) <= 1.0:
                raise bad(key, "must be a number in [0, 1]")
        if self.checker not in CHECKERS:
            raise bad("checker", f"must be one of {', '.join(CHECKERS)}")
        if (
            not isinstance(self.checker_threads, int)
            or isinstance(self.checker_threads, bool)
            or self.checker_threads < 1
        ):
            raise bad("checker_threads", "must be a positive integer")
        if not _is_number(self.verify_share) or not 0.0 <= self.verify_share <= 1.0:
            raise bad("verify_share", "must be a number in [0, 1]")
        for key in ("learn_floor", "learn_verify_share"):
            if not _is_number(getattr(self, key)) or not 0.0 <= getattr(self, key) <= 1.0:
                raise bad(key, "must be a number in [0, 1]")
        if not _is_number(self.verify_answer_threshold) or not 0.0 <= self.verify_answer_threshold <= 1.0:
            raise bad("verify_answer_threshold", "must be a number in [0, 1]")
        if not isinstance(self.verify_first, int) or isinstance(self.verify_first, bool) or self.verify_first < 0:
            raise bad("verify_first", "must be an integer >= 0")
        for key in (
            "hnsw_threshold",
            "max_entries",
            "top_k",
            "semantic_max_chars",
            "embed_max_batch",
            "verify_max_pending",
            "verify_workers",
            "verify_min_window",
            "learn_window",
            "learn_refit_every",
            "learn_max_pending",
        ):
            if (
                not isinstance(getattr(self, key), int)
                or isinstance(getattr(self, key), bool)
                or getattr(self, key) < 1
            ):
                raise bad(key, "must be a positive integer")
        if self.embed_backend not in ("torch", "onnx"):
            raise bad("embed_backend", "must be 'torch' or 'onnx'")
        if self.embed_quantize not in ("none", "int8"):
            raise bad("embed_quantize", "must be 'none' or 'int8'")
        if not isinstance(self.embed_threads, int) or isinstance(self.embed_threads, bool) or self.embed_threads < 0:
            raise bad("embed_threads", "must be an integer >= 0 (0: leave torch's default)")
        for key in ("ttl_seconds", "redis_timeout_s", "redis_retry_s", "flush_interval_s", "purge_interval_s"):
            if not _is_number(getattr(self, key)) or getattr(self, key) <= 0:
                raise bad(key, "must be a positive number")
        if not _is_number(self.embed_max_wait_ms) or self.embed_max_wait_ms < 0:
            raise bad("embed_max_wait_ms", "must be a number >= 0")
        if not _is_number(self.default_temperature) or self.default_temperature < 0:
            raise bad("default_temperature", "must be a number >= 0")
        if self.store not in ("file", "redis"):
            raise bad("store", "must be 'file' or 'redis'")
        if self.cache_sampled not in SAMPLED_POLICIES:
            raise bad("cache_sampled", f"must be one of {', '.join(SAMPLED_POLICIES)}")
        if not isinstance(self.path, str) or not self.path.strip():
            raise bad("path", "must be a non-empty file path")
        if not isinstance(self.redis_url, str) or not self.redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise bad("redis_url", "must start with redis://, rediss:// or unix://")
        if not isinstance(self.redis_prefix, str) or not self.redis_prefix:
            raise bad("redis_prefix", "must be a non-empty string")
        self._resolve_thresholds(bad)  # last: it reads the checker and the conversation mode

    def bounds(self) -> dict[str, float]:
        """``max_false_hit_rate`` per kind of scope."""
        b = self.max_false_hit_rate
        return dict(b) if isinstance(b, Mapping) else {"single": b, "conversation": b}

    def _resolve_thresholds(self, bad) -> None:
        b = self.max_false_hit_rate
        kinds = ("single", "conversation")
        if isinstance(b, Mapping):
            unknown = sorted(set(b) - set(kinds))
            if unknown:
                raise bad("max_false_hit_rate", f"unknown kind {unknown[0]!r} (kinds: single, conversation)")
            b = {k: b.get(k, 0.01) for k in kinds}
        else:
            b = {k: b for k in kinds}
        for k, v in b.items():
            if not _is_number(v) or not 0.0 < v < 1.0:
                raise bad("max_false_hit_rate", f"{k}: must be a number in (0, 1)")
        object.__setattr__(self, "max_false_hit_rate", b)
        names = {
            "single": ("threshold", "checker_threshold"),
            "conversation": ("conversation_threshold", "conversation_checker_threshold"),
        }
        source = {}
        for kind, keys in names.items():
            given = [getattr(self, key) for key in keys]
            for key, v in zip(keys, given):
                if v is not None and (not _is_number(v) or not 0.0 <= v <= 1.0):
                    raise bad(key, "must be a number in [0, 1] (or unset: from the calibration)")
            if all(v is not None for v in given):
                source[kind] = "config"
                continue
            if not self.enabled or (kind == "conversation" and self.conversation_match == "exact"):
                for key, v in zip(keys, given):  # unused: kept at the strictest, reported as such
                    object.__setattr__(self, key, 1.0 if v is None else v)
                source[kind] = "unused" if self.enabled else "disabled"
                continue
            from gateway.cache.calibration import DEFAULT_TABLE, CalibrationError, choose, load_table, rows_for

            checker = self.checker if self.guard else "none"
            try:
                table = load_table(self.calibration or str(DEFAULT_TABLE))
                row = choose(rows_for(table, checker, kind), b[kind], what=f"{kind}: ")
            except CalibrationError as exc:
                raise ValueError(f"cache.max_false_hit_rate: {exc}") from None
            for key, v, chosen in zip(keys, given, (row.cosine, row.checker)):
                object.__setattr__(self, key, chosen if v is None else v)
            source[kind] = "calibration" if all(v is None for v in given) else "config"
        object.__setattr__(self, "_threshold_source", source)

    @property
    def threshold_source(self) -> dict[str, str]:
        """Per kind: "calibration" (chosen under the bound), "config" (set by hand), "unused"."""
        return dict(getattr(self, "_threshold_source", {}))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> CacheConfig:
        """From a YAML/JSON mapping; unknown keys are an error that names them."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"cache.{unknown[0]}: unknown key (known: {', '.join(sorted(known))})")
        return cls(**data)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
