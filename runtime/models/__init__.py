"""Model families, one small file each. ``get_family(architecture)`` -> the module that builds it."""

from __future__ import annotations

import importlib
from types import ModuleType

_FAMILIES = {"llama": "runtime.models.llama"}


def get_family(architecture: str) -> ModuleType:
    if architecture not in _FAMILIES:
        raise ValueError(f"unsupported model architecture {architecture!r} (supported: {', '.join(_FAMILIES)})")
    return importlib.import_module(_FAMILIES[architecture])
