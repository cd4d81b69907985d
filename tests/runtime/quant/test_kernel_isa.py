"""The CPU kernel's other instruction-set paths on this machine.

``runtime/quant/quant_matmul.cc`` compiles one of three paths (AVX-512, AVX2 + FMA, portable loops) from
the compiler's target (AVX2 with int8 activations, or ``avx2_float`` with x in float32; AVX-512 with x in
float32, or ``avx512_vnni`` with int8 activations and VNNI dot products where the CPU has them); the rest of
the suite runs the one ``-march=native`` picks. Here each other path
this CPU can execute is built (``JAXSERVE_KERNEL_ISA``) and the kernel comparisons of the quant tests are
run against it in a child process, so an AVX-512 machine also proves the AVX2 path, and every machine
the portable one (what an ARM CPU, or an x86 one without AVX2, runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from runtime.platform import cpu_info
from runtime.quant import cpu as quant_cpu

ROOT = Path(__file__).resolve().parents[3]
# The kernel-against-reference cases of each kernel (int8 / int4, the file's blocks, float32 rows), and stacking.
KERNEL_TESTS = [
    "tests/runtime/quant/test_quant.py::test_cpu_kernel_matches_reference",
    "tests/runtime/quant/test_gguf_blocks.py::test_cpu_kernel_matches_float",
    "tests/runtime/quant/test_dense.py::test_kernel_matches_float64",
    # a row's output whatever its place in W (stacked q, k, v): avx2_float's Q4_1 tail once broke it
    "tests/runtime/quant/test_fuse_linears.py::test_stacked_rows_give_the_parts_outputs_exactly",
]


def runnable_isas() -> list[str]:
    """The kernel paths this CPU executes, the native build's first."""
    path = cpu_info()["isa_path"]
    vnni = ["avx512_vnni"] if "avx512_vnni" in cpu_info()["simd_flags"] else []
    return {
        "avx512": ["avx512", *vnni, "avx2", "avx2_float", "portable"],
        "avx2": ["avx2", "avx2_float", "portable"],
    }.get(path, ["portable"])


OTHER_ISAS = runnable_isas()[1:]


def test_isa_request_is_validated(monkeypatch):
    monkeypatch.setenv("JAXSERVE_KERNEL_ISA", "sse9")
    with pytest.raises(ValueError, match="JAXSERVE_KERNEL_ISA='sse9'"):
        quant_cpu.requested_isa()


def test_native_build_takes_the_cpus_best_path():
    if jax.default_backend() != "cpu":
        pytest.skip("the FFI kernel is the CPU path")
    if os.environ.get("JAXSERVE_KERNEL_ISA", "native") != "native":
        pytest.skip("this run asked for another path")
    assert quant_cpu.kernel_isa() == runnable_isas()[0]
    # int8 activations by default on AVX2 only (AVX-512 VNNI: opt-in, avx512_vnni)
    assert quant_cpu.kernel_quantizes_activations() == (runnable_isas()[0] == "avx2")


@pytest.mark.slow
@pytest.mark.parametrize("isa", OTHER_ISAS or [pytest.param(None, marks=pytest.mark.skip(reason="one path here"))])
def test_kernel_cases_on_another_path(isa, tmp_path):
    env = dict(os.environ, JAXSERVE_KERNEL_ISA=isa)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from runtime.quant import cpu; print(cpu.kernel_isa(), cpu.kernel_quantizes_activations())",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    built, quantizes = probe.stdout.split()[-2:]
    assert built == isa.split("_")[0]
    assert quantizes == str(isa in ("avx2", "avx512_vnni"))  # int8 activations: those two builds
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *KERNEL_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout, run.stdout[-2000:]
