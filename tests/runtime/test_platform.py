"""runtime.platform.cpu_info: /proc/cpuinfo texts of an AVX-512 server, an AVX2-only one and an ARM
one (abridged from real machines), the ISA path each would take, and the module stays JAX-free."""

from __future__ import annotations

import json
import subprocess
import sys

from runtime.platform import cpu_info

AVX512 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu vme sse sse2 avx f16c fma avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8
vmx flags\t: vnmi preemption_timer
bugs\t\t: spectre_v1

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu
"""

AVX2 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu vme sse sse2 ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 bmi2
"""

ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm sve sve2
CPU implementer\t: 0x41
CPU part\t: 0xd4f
"""


def test_avx512_machine():
    info = cpu_info(AVX512, machine="x86_64")
    assert info["model"] == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert info["isa_path"] == "avx512"
    assert info["simd_flags"] == [
        "avx",
        "avx2",
        "fma",
        "f16c",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512_vnni",
        "avx512_bf16",
        "amx_bf16",
        "amx_int8",
        "amx_tile",
    ]
    assert info["flags"].startswith("fpu vme sse") and info["flags"].endswith("amx_int8")  # the first processor's
    assert info["machine"] == "x86_64"
    json.dumps(info)


def test_avx2_only_machine():
    info = cpu_info(AVX2, machine="x86_64")
    assert info["model"] == "AMD EPYC" and info["isa_path"] == "avx2"
    assert info["simd_flags"] == ["avx", "avx2", "fma", "f16c"]
    # AVX-512 needs all three of F, BW and VL; AVX2 without FMA (or F16C) is the portable path
    assert cpu_info("flags : avx2 avx512f avx512bw fma f16c")["isa_path"] == "avx2"
    assert cpu_info("flags : avx avx2 f16c")["isa_path"] == "portable"
    assert cpu_info("flags : avx avx2 fma")["isa_path"] == "portable"


def test_arm_machine():
    info = cpu_info(ARM, machine="aarch64")
    assert info["isa_path"] == "portable"
    assert info["simd_flags"] == ["asimd", "sve", "sve2"]
    assert info["flags"].startswith("fp asimd") and info["machine"] == "aarch64"
    assert info["model"] is None or isinstance(info["model"], str)  # no "model name": platform.processor()


def test_this_host_and_no_cpuinfo():
    host = cpu_info()
    assert set(host) == {"model", "logical_cores", "machine", "isa_path", "simd_flags", "flags"}
    assert host["isa_path"] in ("avx512", "avx2", "portable") and host["logical_cores"] >= 1
    json.dumps(host)
    empty = cpu_info("")
    assert empty["isa_path"] == "portable" and empty["simd_flags"] == [] and empty["flags"] == ""


def test_platform_module_imports_no_jax():
    code = "import sys, runtime.platform as p; p.cpu_info(); assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
