"""Model families, one small file each. ``get_family(architecture)`` -> the module that builds it.

Each family module has ``params_from_gguf(config, get, unpermute_qk)`` and ``build(config, attend, dtype)``.
What ``attend`` is depends on the family: a ready attention function ``(q, k_pages, v_pages, md) -> out``
when every layer attends alike (Llama), or, for a family that sets ``PER_LAYER_ATTENTION = True``
(Gemma 3: sliding-window local layers between global ones), a factory
``make_attend(*, sm_scale, sliding_window=None, soft_cap=None) -> attention function`` that the model
calls once per layer. ``build_model`` hides the difference: callers hand it the factory
(``functools.partial(runtime.worker.attention.make_attend_fn, backend)``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from runtime.models.config import ModelConfig

_FAMILIES = {"llama": "runtime.models.llama", "gemma3": "runtime.models.gemma3"}


def get_family(architecture: str) -> ModuleType:
    if architecture not in _FAMILIES:
        raise ValueError(f"unsupported model architecture {architecture!r} (supported: {', '.join(_FAMILIES)})")
    return importlib.import_module(_FAMILIES[architecture])


def build_model(config: ModelConfig, make_attend: Callable[..., Callable], dtype) -> Any:
    """The Flax model for ``config``; ``make_attend(*, sm_scale, sliding_window=None, soft_cap=None)``."""
    family = get_family(config.architecture)
    if getattr(family, "PER_LAYER_ATTENTION", False):
        return family.build(config, make_attend, dtype)
    return family.build(config, make_attend(sm_scale=config.attn_scale), dtype)
