"""Gateway configuration: YAML (``configs/gateway.yaml``) and flags -> frozen pydantic dataclasses, validated once.

    load_config(path, overrides) -> read YAML, apply flags, read ``tiers: <file>`` -> validate -> GatewayConfig

Every error names the key that is wrong (``models[0].engine.max_num_seqs: must be an integer, got '8'``).
Unknown keys are errors too: a typo must not silently fall back to a default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

import yaml
from pydantic import Field, field_validator, model_validator
from pydantic.dataclasses import dataclass

from gateway.config.admin import AdminConfig
from gateway.config.tiers import TiersSpec
from gateway.config.typed import LIST_OK, STRICT, ConfigError, NonEmptyStr, StrTuple, key_error, validate
from runtime.api import EngineConfig

__all__ = ["ConfigError", "GatewayConfig", "Limits", "ModelEntry", "load_config"]


@dataclass(frozen=True, config=STRICT)
class ModelEntry:
    """An in-process model. YAML: ``{name, preset?, gguf?, engine?}``; ``preset`` (default: ``name``)
    picks the model, ``gguf`` its file, ``engine.kv_cache_mb`` is ``kv_cache_bytes`` in MiB."""

    name: NonEmptyStr  # what clients put in "model"
    engine: EngineConfig = EngineConfig()

    yaml_keys: ClassVar[tuple[str, ...]] = ("gguf", "preset")

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):  # built in code, or not a mapping (pydantic says so)
            return data
        engine = data.get("engine") or {}
        if not isinstance(engine, Mapping):
            return {k: v for k, v in data.items() if k not in cls.yaml_keys}
        engine = dict(engine)
        if "kv_cache_mb" in engine:
            mb = engine.pop("kv_cache_mb")
            if isinstance(mb, bool) or not isinstance(mb, int) or mb < 1:
                raise key_error("engine.kv_cache_mb", f"must be a positive integer, got {mb!r}")
            engine["kv_cache_bytes"] = mb << 20
        if "gguf" in data:
            engine["gguf_path"] = str(data["gguf"])
        if "preset" in data and not isinstance(data["preset"], str):
            raise key_error("preset", f"must be a string, got {data['preset']!r}")
        model = data.get("preset", data.get("name"))
        if isinstance(model, str):  # else pydantic names the bad name
            engine["model"] = model
        return {**{k: v for k, v in data.items() if k not in cls.yaml_keys}, "engine": engine}


@dataclass(frozen=True, config=STRICT)
class Limits:
    max_body_bytes: int = Field(1 << 20, ge=1)
    max_messages: int = Field(256, ge=1)
    default_max_tokens: int = Field(256, ge=1)


@dataclass(frozen=True, config=STRICT)
class CorsConfig:
    """Cross-origin requests from browser apps (gateway/security.py): ``allow_origins`` lists the origins
    (``https://app.example``) or ``"*"``; preflights are answered before authentication."""

    allow_origins: StrTuple = ()
    allow_headers: StrTuple = ("authorization", "content-type", "x-request-id", "cache-control", "openai-organization")
    max_age_s: int = Field(600, ge=0)

    @model_validator(mode="after")
    def _check(self) -> CorsConfig:
        for i, o in enumerate(self.allow_origins):
            if o != "*" and not re.fullmatch(r"https?://[^/\s]+", o):
                raise ValueError(f"allow_origins[{i}]: must be '*' or scheme://host[:port], got {o!r}")
        return self


@dataclass(frozen=True, config=STRICT)
class RecordConfig:
    """The traffic-shape recorder (gateway/advise/recording.py): lengths and prefix sharing, never text."""

    path: NonEmptyStr
    max_requests: int = Field(10000, ge=1)


@dataclass(frozen=True, config=STRICT)
class GatewayConfig:
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    models: Annotated[tuple[ModelEntry, ...], LIST_OK] = (ModelEntry("smollm2-135m", EngineConfig()),)
    limits: Limits = Limits()
    cache: Mapping[str, Any] = Field(default_factory=dict)  # -> gateway.cache CacheConfig
    warmup: bool = True
    tiers: TiersSpec | None = None  # None: one free tier per model
    admin: AdminConfig | None = None  # None: /metrics and the dashboard are open (gateway/security.py)
    log_content: bool = False  # log prompts and answers (INFO); off by default, -v does not turn it on
    cors: CorsConfig | None = None  # None: no CORS headers (a browser app on another origin cannot call)
    record: RecordConfig | None = None  # None: no traffic-shape recording

    @field_validator("admin", mode="before")
    @classmethod
    def _empty_admin_is_none(cls, value: Any) -> Any:
        return None if value == {} else value  # `admin:` with nothing under it leaves the pages open

    @model_validator(mode="after")
    def _check(self) -> GatewayConfig:
        if not self.models and self.tiers is None:
            raise ValueError("models: must be a non-empty list (empty only with tiers served by runtime servers)")
        names = self.model_names
        if len(set(names)) != len(names):
            raise ValueError(f"models: duplicate names in {names}")
        from gateway.cache import CacheConfig  # light: the model and FAISS load when the cache starts

        try:
            CacheConfig.from_mapping(self.cache)  # its ValueError names the key (cache.threshold: ...)
        except TypeError as exc:  # a key that is not a string
            raise ValueError(f"cache: {exc}") from None
        if self.tiers is not None:
            try:
                self.tiers.check_served(names)
            except ValueError as exc:
                raise ValueError(f"tiers.{exc}") from None
            served = {t.model for t in self.tiers.tiers if not t.remote}
            unused = [n for n in names if n not in served]
            if unused:
                raise ValueError(
                    f"models: {', '.join(unused)} not served by any tier (tiers: {', '.join(self.tiers.names)})"
                )
        return self

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    @property
    def tier_spec(self) -> TiersSpec:
        return self.tiers or TiersSpec.from_models(self.model_names)


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> GatewayConfig:
    """Read YAML (if given), apply flag overrides (``{"port": 8001, "cache.redis_url": ...}``), validate.

    ``tiers: tiers.yaml`` names a file, relative to the config's folder, holding the ``tiers`` mapping."""
    data: dict[str, Any] = {}
    if path is not None:
        data = _read_yaml(Path(path), "config file")
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping")
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if "." in key:
            section, sub = key.split(".", 1)
            data.setdefault(section, {})
            data[section] = {**(data[section] or {}), sub: value}
        else:
            data[key] = value
    if isinstance(data.get("tiers"), str):
        base = Path(path).parent if path is not None else Path(".")
        data["tiers"] = _read_yaml((base / data["tiers"]).expanduser(), "tiers: file")
    return validate(GatewayConfig, data)


def _read_yaml(file: Path, what: str) -> Any:
    try:
        return yaml.safe_load(file.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {file}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}") from None
