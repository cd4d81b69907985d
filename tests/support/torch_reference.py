"""The torch-based references (transformers, sentence-transformers, torch itself) and where they are missing.

torch has a CPU build on this machine's disk for Python 3.11 only; on 3.12+ pip would fetch a multi-GB CUDA build,
so pyproject.toml installs torch, transformers, accelerate and sentence-transformers on 3.11 alone. On 3.12 and 3.13
(``make test PYTHON=python3.13``; CI's second leg, ``make ci-newpy``) the tests that need one of them skip and say
why; on 3.11 a missing one is a broken install, and the test fails on its import instead of skipping.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

import pytest

REASON = "torch for Python 3.12 and newer is not on this machine's disk"


def _missing(module: str) -> bool:
    return sys.version_info >= (3, 12) and importlib.util.find_spec(module) is None


def skip_reason(*modules: str) -> str | None:
    """Why a test needing ``modules`` skips here, or None when it runs (3.11, or all of them installed)."""
    missing = [m for m in modules if _missing(m)]
    if not missing:
        return None
    return f"needs {', '.join(missing)} (torch-based, not installed on Python 3.12 and newer): {REASON}"


def needs(*modules: str) -> pytest.MarkDecorator:
    """A mark for a test or module (``pytestmark``) that needs ``modules``: skipped where ``skip_reason``."""
    reason = skip_reason(*modules)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def require(module: str) -> ModuleType:
    """``module`` imported, for a fixture: skips the tests using it on 3.12 without it, fails on 3.11."""
    reason = skip_reason(module)
    if reason is not None:
        pytest.skip(reason)
    return importlib.import_module(module)
