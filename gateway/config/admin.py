"""``admin:`` in ``configs/gateway.yaml`` -> ``AdminConfig``: the admin key, kept only as its sha256.

    admin:                         # leave it out (the default) and /metrics and the dashboard are open,
      key_env: JAXSERVE_ADMIN_KEY  # which suits a gateway on 127.0.0.1; or key_sha256: <64 hex digits>

``gateway.security`` checks each request to the operator pages against it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, field_validator, model_validator
from pydantic.dataclasses import dataclass
from pydantic_core import PydanticCustomError

from gateway.config.typed import STRICT, hash_secret, key_error, secret_from_env, validate


@dataclass(frozen=True, config=STRICT)
class AdminConfig:
    key_sha256: str  # the admin key is never kept in clear

    yaml_keys: ClassVar[tuple[str, ...]] = ("key_env",)

    @model_validator(mode="before")
    @classmethod
    def _hash_key_env(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, Mapping):  # built in code, or not a mapping (pydantic says so)
            return data
        if "key" in data:
            raise key_error("key", "keys are not written in clear; give key_sha256 or key_env")
        if "key_env" not in data:
            return data
        if "key_sha256" in data:
            raise PydanticCustomError("config", "give exactly one of key_sha256 or key_env")
        rest = {k: v for k, v in data.items() if k != "key_env"}
        return {**rest, "key_sha256": hash_secret(secret_from_env(info, data["key_env"]))}

    @field_validator("key_sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not re.fullmatch(r"[0-9a-f]{64}", value):
            raise ValueError("must be 64 lowercase hex digits (sha256 of the key)")
        return value


def parse_admin(data: Any, env: Mapping[str, str] | None = None) -> AdminConfig | None:
    """``admin:`` -> ``AdminConfig``; ``None`` (absent or empty) leaves the operator pages open."""
    if data is None or data == {}:
        return None
    return validate(AdminConfig, data, "admin", context={"env": env})
