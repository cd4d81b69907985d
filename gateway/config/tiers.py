"""Cost tiers, the auto router's settings and per-key limits: ``configs/tiers.yaml`` -> frozen pydantic dataclasses.

A tier is a model with a price, a context limit and a capacity, served in-process (an entry of the
gateway's ``models``) or by a runtime server (``url``, ``python -m runtime.server``). ``fallback``
names the tiers that answer, in order, when this one is down, overloaded, too slow or fails.
``urls`` (instead of ``url``) lists data-parallel replicas of one tier: runtime servers of the same
model, each request dispatched to the least-loaded live one (``gateway.backends.replicas.ReplicaSet``).

    tiers:
      - {name: large, model: gemma3-270m, url: "http://127.0.0.1:8101", fallback: [small],
         price: {input_per_mtok: 0.60, output_per_mtok: 2.40}, max_context: 2048, capacity: 16}
      - {name: small, model: smollm2-135m, price: {input_per_mtok: 0.10, output_per_mtok: 0.40}}
      - {name: pool, model: smollm2-135m, urls: ["http://10.0.0.5:8102", "http://10.0.0.6:8102"]}
    router: {default: small, escalate_to: large, long_prompt_chars: 1500, deep_conversation_turns: 6}
    keys:
      require: false
      default: {budget_usd: 5.0, period_seconds: 86400, requests_per_minute: 600}
      entries:
        - {name: team-a, key_env: TEAM_A_KEY, budget_usd: 0.5, tiers: [small]}
      shared: {redis_url: "redis://127.0.0.1:6379/0", sync_interval_s: 0.5}   # optional: replicas

Keys are never stored in clear: an entry gives ``key_sha256`` (hex) or ``key_env`` (the name of an
environment variable holding the key, hashed when the config loads). ``parse_tiers`` validates the
mapping on its own; ``gateway.config.gateway`` validates it as its ``tiers`` key.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar
from urllib.parse import urlparse

from pydantic import ValidationInfo, model_validator
from pydantic.dataclasses import dataclass

from gateway.config.typed import LIST_OK, STRICT, NonEmptyStr, Sha256Hex, StrTuple, hash_key_env, key_error, validate


@dataclass(frozen=True, config=STRICT)
class Price:
    input_per_mtok: float = 0.0  # USD per million prompt tokens
    output_per_mtok: float = 0.0  # USD per million completion tokens

    @model_validator(mode="after")
    def _check(self) -> Price:
        if self.input_per_mtok < 0 or self.output_per_mtok < 0:
            raise ValueError(f"prices must be >= 0, got {self.input_per_mtok} and {self.output_per_mtok}")
        return self


# What a tier can do: "chat" needs a model trained to follow a chat template; "completion" is plain text
# continuation (/v1/completions, any model); "json" (response_format) and "tools" are grammar-constrained
# chat answers.
CAPABILITIES = ("chat", "completion", "json", "tools")
TRUNCATION = ("disabled", "auto")


@dataclass(frozen=True, config=STRICT)
class SamplingDefaults:
    """A tier's sampling settings for requests that leave them out (None: the model preset's, else
    OpenAI's defaults)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    repetition_penalty: float | None = None

    @model_validator(mode="after")
    def _check(self) -> SamplingDefaults:
        from runtime.api import SamplingParams  # the runtime's bounds: one source

        SamplingParams(**self.items())  # ValueError naming the field
        return self

    def items(self) -> dict[str, float]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def model_preset(model: str):
    """The runtime's preset of ``model`` (runtime.loading.presets), or None for another model."""
    from runtime.loading.presets import PRESETS

    return PRESETS.get(model)


@dataclass(frozen=True, config=STRICT)
class TierConfig:
    name: str
    model: str  # the model served: a gateway ``models`` entry (in-process) or the runtime server's model
    url: str | None = None  # runtime server; None = in-process
    urls: StrTuple = ()  # data-parallel replicas (runtime servers of this model); excludes ``url``
    price: Price = Price()
    max_context: int | None = None  # tokens; None = the model's own
    capacity: int = 64  # requests in flight through this gateway before overflow goes down the chain
    timeout_s: float = 60.0  # seconds without progress (first token, next token) before falling back
    fallback: StrTuple = ()
    # None: from the model preset (a pretrained model: completion only), else everything
    capabilities: StrTuple | None = None
    sampling: SamplingDefaults | None = None  # None: the model preset's recommended settings
    truncation: str = "disabled"  # "auto": drop the oldest turns of a conversation too long for the context

    @model_validator(mode="before")
    @classmethod
    def _no_empty_urls(cls, data: Any) -> Any:
        # `urls: []` in YAML is a tier with no server: a mistake, not an in-process tier (built in code,
        # urls=() is the default, in-process)
        if isinstance(data, Mapping) and "urls" in data and not data["urls"]:
            raise key_error("urls", "must list at least one runtime server (leave it out for in-process)")
        return data

    @model_validator(mode="after")
    def _check(self) -> TierConfig:
        if not self.name or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:-]*", self.name):
            raise ValueError(f"name: {self.name!r} must be letters, digits, '.', '_', ':' or '-'")
        if self.name == "auto":
            raise ValueError("name: 'auto' is reserved for the router")
        if self.max_context is not None and self.max_context < 2:
            raise ValueError(f"max_context: must be >= 2, got {self.max_context}")
        if self.capacity < 1:
            raise ValueError(f"capacity: must be >= 1, got {self.capacity}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s: must be > 0, got {self.timeout_s}")
        if self.url is not None:
            _check_url(self.url, "url")
        if self.urls:
            if self.url is not None:
                raise ValueError("url, urls: give one runtime server (url) or a list of replicas (urls), not both")
            for i, u in enumerate(self.urls):
                _check_url(u, f"urls[{i}]")
            normalized = [u.rstrip("/") for u in self.urls]
            dupes = sorted({u for u in normalized if normalized.count(u) > 1})
            if dupes:
                raise ValueError(f"urls: the same replica is listed twice ({', '.join(dupes)})")
        if self.name in self.fallback:
            raise ValueError(f"fallback: a tier cannot fall back to itself ({self.name!r})")
        for c in self.capabilities or ():
            if c not in CAPABILITIES:
                raise ValueError(f"capabilities: unknown capability {c!r} (known: {', '.join(CAPABILITIES)})")
        if self.capabilities is not None and not self.capabilities:
            raise ValueError("capabilities: must name at least one (leave it out for the model's own)")
        if self.truncation not in TRUNCATION:
            raise ValueError(f"truncation: must be one of {', '.join(TRUNCATION)}, got {self.truncation!r}")
        return self

    @property
    def can(self) -> frozenset[str]:
        """The capabilities: configured, or the model preset's (a pretrained model only completes text)."""
        if self.capabilities is not None:
            return frozenset(self.capabilities)
        preset = model_preset(self.model)
        return frozenset(CAPABILITIES if preset is None or preset.chat else ("completion",))

    @property
    def sampling_defaults(self) -> dict[str, float]:
        """What a request that leaves a sampling field out gets: this tier's ``sampling``, else the model
        preset's recommended settings (fields neither names: OpenAI's defaults)."""
        if self.sampling is not None:
            return self.sampling.items()
        preset = model_preset(self.model)
        return dict(preset.sampling) if preset is not None else {}

    @property
    def replica_urls(self) -> tuple[str, ...]:
        """The runtime servers of this tier: ``urls``, or ``(url,)``; empty for an in-process tier."""
        return self.urls or ((self.url,) if self.url is not None else ())

    @property
    def remote(self) -> bool:
        return bool(self.replica_urls)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price.input_per_mtok + completion_tokens * self.price.output_per_mtok) / 1e6


def _check_url(url: str, key: str) -> None:
    u = urlparse(url)
    if u.scheme not in ("http", "https") or not u.netloc or any(c.isspace() for c in url):
        raise ValueError(f"{key}: must be http(s)://host:port, got {url!r}")


@dataclass(frozen=True, config=STRICT)
class RouterConfig:
    """``model: "auto"``: ``escalate_to`` for requests that look hard, ``default`` for the rest."""

    default: str
    escalate_to: str | None = None
    long_prompt_chars: int = 1500  # a prompt longer than this escalates
    deep_conversation_turns: int = 6  # this many user turns or more escalates
    code: bool = True  # code markers escalate
    math: bool = True  # maths markers escalate
    budget_reserve: float = 0.1  # under this fraction of its budget left, a key is routed to ``default``

    @model_validator(mode="after")
    def _check(self) -> RouterConfig:
        if self.long_prompt_chars < 1 or self.deep_conversation_turns < 1:
            raise ValueError("long_prompt_chars and deep_conversation_turns must be >= 1")
        if not 0 <= self.budget_reserve < 1:
            raise ValueError(f"budget_reserve: must be in [0, 1), got {self.budget_reserve}")
        return self


@dataclass(frozen=True, config=STRICT)
class KeyPolicy:
    name: NonEmptyStr = "default"
    key_sha256: Sha256Hex | None = None  # None: the policy of callers with no configured key
    budget_usd: float | None = None  # spend allowed per period; None = unlimited
    period_seconds: int = 86400  # budget windows are aligned to multiples of this (UTC)
    requests_per_minute: int | None = None  # None = unlimited
    tiers: StrTuple | None = None  # tiers this key may use; None = all

    yaml_keys: ClassVar[tuple[str, ...]] = ("key_env",)

    @model_validator(mode="before")
    @classmethod
    def _hash_key_env(cls, data: Any, info: ValidationInfo) -> Any:
        return hash_key_env(data, info, owner="name")

    @model_validator(mode="after")
    def _check(self) -> KeyPolicy:
        if self.budget_usd is not None and self.budget_usd < 0:
            raise ValueError(f"budget_usd: must be >= 0, got {self.budget_usd}")
        if self.period_seconds < 1:
            raise ValueError(f"period_seconds: must be >= 1, got {self.period_seconds}")
        if self.requests_per_minute is not None and self.requests_per_minute < 1:
            raise ValueError(f"requests_per_minute: must be >= 1, got {self.requests_per_minute}")
        if self.tiers is not None and not self.tiers:
            raise ValueError("tiers: must name at least one tier (leave it out to allow all)")
        return self


@dataclass(frozen=True, config=STRICT)
class SharedLedgerConfig:
    """``keys.shared``: gateway replicas enforce budgets and rate limits together through one Redis
    (``gateway.accounting.sync``). Each replica pushes its deltas and pulls the global totals every
    ``sync_interval_s``; its checks read the last totals it pulled plus its own requests since."""

    redis_url: str
    prefix: str = "jaxserve:usage:"
    sync_interval_s: float = 0.5  # how stale another replica's spend and requests may be here
    timeout_s: float = 0.5  # per Redis round trip; a failed sync leaves this replica enforcing locally

    @model_validator(mode="after")
    def _check(self) -> SharedLedgerConfig:
        if not self.redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"redis_url: must start with redis://, rediss:// or unix://, got {self.redis_url!r}")
        if not self.prefix:
            raise ValueError("prefix: must be a non-empty string")
        if not 0 < self.sync_interval_s <= 60:
            raise ValueError(f"sync_interval_s: must be in (0, 60], got {self.sync_interval_s}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s: must be > 0, got {self.timeout_s}")
        return self


@dataclass(frozen=True, config=STRICT)
class KeysConfig:
    require: bool = False  # True: requests without a configured key get 401
    default: KeyPolicy = KeyPolicy()
    entries: Annotated[tuple[KeyPolicy, ...], LIST_OK] = ()
    shared: SharedLedgerConfig | None = None  # None: each gateway process keeps its own ledger

    @model_validator(mode="after")
    def _check(self) -> KeysConfig:
        if self.default.key_sha256 is not None:
            raise ValueError("default: the default policy has no key")
        for i, e in enumerate(self.entries):
            if e.key_sha256 is None:
                raise ValueError(f"entries[{i}]: needs key_sha256 or key_env")
        seen = [e.key_sha256 for e in self.entries]
        if len(set(seen)) != len(seen):
            raise ValueError("entries: the same key is listed twice")
        return self

    def lookup(self, key_sha256: str | None) -> KeyPolicy | None:
        for e in self.entries:
            if key_sha256 is not None and e.key_sha256 == key_sha256:
                return e
        return None


@dataclass(frozen=True, config=STRICT)
class TiersSpec:
    tiers: Annotated[tuple[TierConfig, ...], LIST_OK]
    router: RouterConfig
    keys: KeysConfig = KeysConfig()

    @model_validator(mode="before")
    @classmethod
    def _router_defaults_to_the_last_tier(cls, data: Any) -> Any:
        """No ``router:`` in YAML: ``auto`` sends every request to the last tier (the cheapest, by convention)."""
        if isinstance(data, Mapping) and not data.get("router"):
            tiers = data.get("tiers")
            last = tiers[-1] if isinstance(tiers, list) and tiers else None
            if isinstance(last, Mapping) and isinstance(last.get("name"), str):
                return {**data, "router": {"default": last["name"]}}
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> TiersSpec:
        if not self.tiers:
            raise ValueError("tiers: must be a non-empty list")
        names = self.names
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tiers: duplicate name(s) {', '.join(dupes)}")
        for i, t in enumerate(self.tiers):
            for f in t.fallback:
                if f not in names:
                    raise ValueError(f"tiers[{i}].fallback: unknown tier {f!r} (tiers: {', '.join(names)})")
        for key in ("default", "escalate_to"):
            v = getattr(self.router, key)
            if v is not None and v not in names:
                raise ValueError(f"router.{key}: unknown tier {v!r} (tiers: {', '.join(names)})")
        for e in (self.keys.default, *self.keys.entries):
            for t in e.tiers or ():
                if t not in names:
                    raise ValueError(f"keys: {e.name}.tiers: unknown tier {t!r} (tiers: {', '.join(names)})")
        local_models = (info.context or {}).get("local_models")
        if local_models is not None:
            self.check_served(local_models)
        return self

    def check_served(self, local_models: Sequence[str]) -> None:
        """ValueError unless every in-process tier's model is one of ``local_models`` (the gateway's)."""
        for i, t in enumerate(self.tiers):
            if not t.remote and t.model not in local_models:
                raise ValueError(
                    f"tiers[{i}].model: {t.model!r} is not one of the gateway's in-process models "
                    f"({', '.join(local_models) or 'none'}); add it under models, or give the tier "
                    "a url or urls"
                )

    def tier(self, name: str) -> TierConfig:
        return next(t for t in self.tiers if t.name == name)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tiers]

    def chain(self, name: str) -> tuple[str, ...]:
        """``name`` then its fallbacks, depth first, each tier once."""
        out: list[str] = []

        def visit(n: str) -> None:
            if n in out:
                return
            out.append(n)
            for f in self.tier(n).fallback:
                visit(f)

        visit(name)
        return tuple(out)

    @classmethod
    def from_models(cls, model_names: Sequence[str]) -> TiersSpec:
        """No tiers configured: one free tier per in-process model, ``auto`` = the first."""
        return cls(tuple(TierConfig(n, n) for n in model_names), RouterConfig(default=model_names[0]))


def parse_tiers(data: Any, local_models: Sequence[str], env: Mapping[str, str] | None = None) -> TiersSpec:
    """Validate ``{tiers, router, keys}``; ``local_models`` are the gateway's in-process model names,
    ``env`` where ``key_env`` reads keys (default: the process's environment)."""
    return validate(TiersSpec, data, context={"env": env, "local_models": list(local_models)})
