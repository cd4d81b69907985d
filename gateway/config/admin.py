"""``admin:`` in ``configs/gateway.yaml`` -> ``AdminConfig``: the admin key, kept only as its sha256.

    admin:                         # leave it out (the default) and /metrics and the dashboard are open,
      key_env: JAXSERVE_ADMIN_KEY  # which suits a gateway on 127.0.0.1; or key_sha256: <64 hex digits>

``gateway.security`` checks each request to the operator pages against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationInfo, model_validator
from pydantic.dataclasses import dataclass

from gateway.config.typed import STRICT, Sha256Hex, hash_key_env, validate


@dataclass(frozen=True, config=STRICT)
class AdminConfig:
    key_sha256: Sha256Hex  # the admin key is never kept in clear

    yaml_keys: ClassVar[tuple[str, ...]] = ("key_env",)

    @model_validator(mode="before")
    @classmethod
    def _hash_key_env(cls, data: Any, info: ValidationInfo) -> Any:
        return hash_key_env(data, info)


def parse_admin(data: Any, env: Mapping[str, str] | None = None) -> AdminConfig | None:
    """``admin:`` -> ``AdminConfig``; ``None`` (absent or empty) leaves the operator pages open."""
    if data is None or data == {}:
        return None
    return validate(AdminConfig, data, "admin", context={"env": env})
