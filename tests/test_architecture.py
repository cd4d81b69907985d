"""The layout docs/ARCHITECTURE.md describes is the one on disk, and the layer promises hold at run time
(the import contracts themselves are checked statically by `make lint`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()


def rooms(package: str) -> set[str]:
    """Sub-packages and top-level modules of a package, as the doc names them (``core/``, ``api.py``)."""
    here = ROOT / package
    names = {p.name + "/" for p in here.iterdir() if (p / "__init__.py").exists()}
    names |= {p.name for p in here.glob("*.py") if p.name != "__init__.py"}
    return names


@pytest.mark.parametrize("package", ["runtime", "gateway"])
def test_every_room_is_in_the_architecture_doc(package):
    block = DOC[DOC.index(f"\n{package}/") + 1 :].splitlines()[1:]
    block = block[: next(i for i, line in enumerate(block) if not line.startswith(" "))]  # up to the next package
    # the name column: "  core/           pure Python..." or "  server.py, generate.py, kv_calc.py     the ..."
    heads = [line[2:].split("  ")[0] for line in block if line[2:3].strip()]
    listed = {name for head in heads for name in head.split(", ")}
    missing = sorted(rooms(package) - listed - {"__main__.py"})
    assert not missing, f"docs/ARCHITECTURE.md does not describe {package}/{missing}"
    gone = sorted(n for n in listed if n.endswith("/") and n not in rooms(package) and n != f"{package}/")
    assert not gone, f"docs/ARCHITECTURE.md describes rooms that do not exist in {package}/: {gone}"


@pytest.mark.parametrize(
    "modules, absent",
    [
        ("gateway.app", ("jax", "flax")),  # a gateway whose tiers are all remote never loads JAX
        ("runtime.api, runtime.core.scheduler, runtime.core.kv_cache_manager, runtime.core.kv_sizing", ("jax",)),
        ("runtime.serving.protocol", ("jax",)),  # the gateway's remote backend speaks it
    ],
)
def test_layers_that_must_stay_jax_free(modules, absent):
    code = f"import sys, {modules}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"importing {modules} loaded {out.stdout.strip()}"
