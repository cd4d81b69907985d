"""Gateway configuration: YAML (``configs/gateway.yaml``) and flags -> frozen dataclasses, validated once.

Every error names the key that is wrong (``models[0].engine.max_num_seqs: must be >= 1``). Unknown
keys are errors too: a typo must not silently fall back to a default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from gateway.security import AdminConfig, parse_admin
from gateway.config.tiers import TiersSpec, parse_tiers
from gateway.config.typed import ConfigError, check, build
from runtime.api import EngineConfig

__all__ = ["ConfigError", "GatewayConfig", "Limits", "ModelEntry", "load_config"]


@dataclass(frozen=True)
class ModelEntry:
    name: str  # what clients put in "model"
    engine: EngineConfig


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1 << 20
    max_messages: int = 256
    default_max_tokens: int = 256


@dataclass(frozen=True)
class GatewayConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    models: tuple[ModelEntry, ...] = (ModelEntry("smollm2-135m", EngineConfig()),)
    limits: Limits = Limits()
    cache: Mapping[str, Any] = field(default_factory=dict)  # -> gateway.cache CacheConfig
    warmup: bool = True
    tiers: TiersSpec | None = None  # None: one free tier per model
    admin: AdminConfig | None = None  # None: /metrics and the dashboard are open (gateway/security.py)
    log_content: bool = False  # log prompts and answers (INFO); off by default, -v does not turn it on

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    @property
    def tier_spec(self) -> TiersSpec:
        return self.tiers or TiersSpec.from_models(self.model_names)


def _model(data: Any, i: int) -> ModelEntry:
    where = f"models[{i}]"
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: must be a mapping with 'name' and optional 'preset' / 'gguf' / 'engine'")
    unknown = sorted(set(data) - {"name", "preset", "gguf", "engine"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.name: required, a non-empty string")
    engine = dict(data.get("engine") or {})
    if "kv_cache_mb" in engine:
        mb = engine.pop("kv_cache_mb")
        if isinstance(mb, bool) or not isinstance(mb, int) or mb < 1:
            raise ConfigError(f"{where}.engine.kv_cache_mb: must be a positive integer, got {mb!r}")
        engine["kv_cache_bytes"] = mb << 20
    if "gguf" in data:
        engine["gguf_path"] = str(data["gguf"])
    engine["model"] = data.get("preset", name)
    return ModelEntry(name, build(EngineConfig, engine, f"{where}.engine"))


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> GatewayConfig:
    """Read YAML (if given), apply flag overrides (``{"port": 8001, "cache.redis_url": ...}``), validate."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
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
    unknown = sorted(set(data) - {"host", "port", "models", "limits", "cache", "warmup", "tiers", "admin",
                                  "log_content"})
    if unknown:
        raise ConfigError(f"unknown top-level key(s): {', '.join(unknown)}")
    kwargs: dict[str, Any] = {k: check(data[k], kind, k) for k, kind in
                              (("host", "str"), ("port", "int"), ("warmup", "bool"), ("log_content", "bool"))
                              if k in data}
    if data.get("admin") is not None:
        kwargs["admin"] = parse_admin(data["admin"])
    if not 0 <= kwargs.get("port", 0) < 65536:
        raise ConfigError(f"port: must be an integer in 0..65535, got {kwargs['port']!r}")
    if "models" in data:
        models = data["models"]
        if not isinstance(models, list):
            raise ConfigError("models: must be a list")
        if not models and data.get("tiers") is None:
            raise ConfigError("models: must be a non-empty list (empty only with tiers served by runtime servers)")
        entries = tuple(_model(m, i) for i, m in enumerate(models))
        names = [m.name for m in entries]
        if len(set(names)) != len(names):
            raise ConfigError(f"models: duplicate names in {names}")
        kwargs["models"] = entries
    if "limits" in data:
        limits = build(Limits, data["limits"], "limits")
        for key in ("max_body_bytes", "max_messages", "default_max_tokens"):
            if getattr(limits, key) < 1:
                raise ConfigError(f"limits.{key}: must be >= 1")
        kwargs["limits"] = limits
    if "cache" in data:
        cache = data["cache"] or {}
        if not isinstance(cache, Mapping):
            raise ConfigError("cache: must be a mapping")
        from gateway.cache import CacheConfig  # light: the model and FAISS load when the cache starts

        try:
            CacheConfig.from_mapping(cache)
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc)) from None
        kwargs["cache"] = dict(cache)
    if data.get("tiers") is not None:
        models = kwargs.get("models", GatewayConfig.models)
        spec = _tiers(data["tiers"], Path(path).parent if path is not None else Path("."), [m.name for m in models])
        unused = [m.name for m in models if m.name not in {t.model for t in spec.tiers if not t.remote}]
        if unused:
            raise ConfigError(f"models: {', '.join(unused)} not served by any tier (tiers: {', '.join(spec.names)})")
        kwargs["tiers"] = spec
    return GatewayConfig(**kwargs)


def _tiers(value: Any, base: Path, local_models: list[str]) -> TiersSpec:
    """``tiers: tiers.yaml`` (a file, relative to the config's folder) or the same mapping inline."""
    where = "tiers"
    if isinstance(value, str):
        file = (base / value).expanduser()
        try:
            value = yaml.safe_load(file.read_text()) or {}
        except FileNotFoundError:
            raise ConfigError(f"tiers: file not found: {file}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file}: not valid YAML: {exc}") from None
        where = str(file)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: must be a mapping with tiers, router and keys (or a path to such a file)")
    return parse_tiers(value, local_models, where)
