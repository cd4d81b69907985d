"""Gateway configuration: YAML (``configs/gateway.yaml``) and flags -> frozen dataclasses, validated once.

Every error names the key that is wrong (``models[0].engine.max_num_seqs: must be >= 1``). Unknown
keys are errors too: a typo must not silently fall back to a default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from runtime.engine import EngineConfig


class ConfigError(ValueError):
    pass


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

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.models]


def _build(cls, data: Any, where: str):
    if data is None:
        return cls()
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: must be a mapping, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    types = {f.name: f.type for f in dataclasses.fields(cls)}
    for key, value in data.items():
        expected = types[key] if isinstance(types[key], str) else getattr(types[key], "__name__", "")
        if expected in ("int",) and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{where}.{key}: must be an integer, got {value!r}")
        if expected in ("bool",) and not isinstance(value, bool):
            raise ConfigError(f"{where}.{key}: must be true or false, got {value!r}")
        if expected in ("str",) and not isinstance(value, str):
            raise ConfigError(f"{where}.{key}: must be a string, got {value!r}")
    try:
        return cls(**data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


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
    return ModelEntry(name, _build(EngineConfig, engine, f"{where}.engine"))


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
    unknown = sorted(set(data) - {"host", "port", "models", "limits", "cache", "warmup"})
    if unknown:
        raise ConfigError(f"unknown top-level key(s): {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    if "host" in data:
        if not isinstance(data["host"], str):
            raise ConfigError("host: must be a string")
        kwargs["host"] = data["host"]
    if "port" in data:
        port = data["port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
            raise ConfigError(f"port: must be an integer in 0..65535, got {port!r}")
        kwargs["port"] = port
    if "warmup" in data:
        if not isinstance(data["warmup"], bool):
            raise ConfigError("warmup: must be true or false")
        kwargs["warmup"] = data["warmup"]
    if "models" in data:
        models = data["models"]
        if not isinstance(models, list) or not models:
            raise ConfigError("models: must be a non-empty list")
        entries = tuple(_model(m, i) for i, m in enumerate(models))
        names = [m.name for m in entries]
        if len(set(names)) != len(names):
            raise ConfigError(f"models: duplicate names in {names}")
        kwargs["models"] = entries
    if "limits" in data:
        limits = _build(Limits, data["limits"], "limits")
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
    return GatewayConfig(**kwargs)
