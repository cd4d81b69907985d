"""The layout docs/ARCHITECTURE.md describes is the one on disk, and the layer promises hold at run time
(the import contracts themselves are checked statically by `make lint`)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()


def rooms(package: str) -> set[str]:
    """Sub-packages and top-level modules of a package, as the doc names them (``core/``, ``api.py``)."""
    here = ROOT / package
    names = {p.name + "/" for p in here.iterdir() if (p / "__init__.py").exists()}
    names |= {p.name for p in here.glob("*.py") if p.name != "__init__.py"}
    return names


@pytest.mark.parametrize("package", ["runtime", "gateway", "tools"])
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


@functools.cache
def graph_with_annotations() -> grimp.ImportGraph:
    """The project's import graph, counting the imports made for type checkers only."""
    return grimp.build_graph("gateway", "tools", "runtime", "pallas_kernels", exclude_type_checking_imports=False)


# The gateway is left out: gateway.keys names gateway.observability's types under TYPE_CHECKING while
# observability imports the keys at run time (a cycle in annotations only, listed in gateway/keys.py).
@pytest.mark.parametrize("root", ["runtime", "pallas_kernels", "tools"])
def test_no_cycle_even_through_annotations(root):
    """What the contracts' acyclic_siblings checks, imports under ``if TYPE_CHECKING:`` included (the contracts
    leave them out): no import between siblings (modules or packages of one package, at any depth) has to go
    for the siblings to be acyclic."""
    graph = graph_with_annotations()
    packages = [root, *sorted(m for m in graph.find_descendants(root) if graph.find_children(m))]
    breakers = sorted(f"{a} -> {b}" for package in packages for a, b in graph.nominate_cycle_breakers(package))
    assert not breakers, f"imports that close a cycle in {root} (under TYPE_CHECKING or not): {breakers}"


def test_the_runtime_contract_defines_what_it_names():
    """runtime.api imports nothing of the project, not even for a type checker: the types its fields name
    (PrefillHandover) are defined there, and runtime.distributed.kv_transfer.PrefilledKV implements it."""
    graph = graph_with_annotations()
    assert graph.find_modules_directly_imported_by("runtime.api") == set()
    from runtime.api import PrefillHandover
    from runtime.distributed.kv_transfer import PrefilledKV

    assert PrefillHandover in PrefilledKV.__mro__
