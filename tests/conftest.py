"""Shared fixtures. The real model loads once per module that uses it (about 7 s); HF reference once per module."""

from __future__ import annotations

import json
import os
import resource
import statistics
from pathlib import Path

import pytest

from runtime.platform import compilation_cache_dir, configure_xla

# Each process's peak resident memory (GB) and the module during which it was reached, and the modules that
# left the most memory behind (resident after the module's trim minus before it): printed at the end of
# the run (pytest_terminal_summary), one line per xdist worker, so what makes a worker big is named
# (issue 33: no worker above 6 GB). A peak reached late is often the sum of what earlier modules kept.
_PEAK = {"gb": 0.0, "module": "", "kept": []}
_KEPT_SHOWN = 4
_WORKER_PEAKS: dict[str, dict] = {}


def pytest_configure(config):
    configure_xla()  # before any test touches JAX
    # One persistent compilation cache for the whole run, every program in it, in this process, its xdist workers
    # and the servers the tests start (JAX reads these at import): a program that several modules compile
    # (each module's trim clears the in-memory caches; the tiny engine's programs, the samplers, the parity
    # engines) compiles once per run and loads after that; JAX's default keeps only programs over 1 s. Cold on
    # a fresh machine: it only fills during the run (issue 33). JAXSERVE_TEST_COMPILATION_CACHE=0 turns it off.
    if os.environ.get("JAXSERVE_TEST_COMPILATION_CACHE", "1") != "0":
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", compilation_cache_dir())
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    folder = os.environ.get("JAXSERVE_COMPILE_REPORT")
    controller = getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")
    # a pytest that a test runs (a child of a reporting worker) does not report: its seconds are that test's
    child = os.environ.get("JAXSERVE_COMPILE_REPORT_PID", str(os.getpid())) != str(os.getpid())
    if folder and not controller and not child:  # per-test JAX seconds (tests/support/compile_report.py)
        os.environ["JAXSERVE_COMPILE_REPORT_PID"] = str(os.getpid())
        from tests.support.compile_report import CompileReport

        config.pluginmanager.register(CompileReport(folder), "jaxserve-compile-report")


def pytest_collection_modifyitems(session, config, items):
    """Longest files first (``tests/durations.json``, made by ``scripts/test_durations.py``): with ``--dist
    loadfile`` and ``--no-loadscope-reorder`` (``make test``) xdist hands files out in this order, so the two
    workers end together instead of one running a long module alone at the end. Within a file the order
    stays as written; a file the table does not list counts as the median one."""
    path = Path(__file__).with_name("durations.json")
    try:
        seconds = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    median = statistics.median(seconds.values()) if seconds else 0.0
    root = Path(str(config.rootpath))

    def cost(item) -> float:
        try:
            rel = Path(str(item.path)).relative_to(root).as_posix()
        except ValueError:
            return median
        return seconds.get(rel, median)

    items.sort(key=lambda item: -cost(item))  # stable: a file's tests keep their order


def _note_peak(module: str) -> None:
    gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB
    if gb > _PEAK["gb"] + 0.05:
        _PEAK.update(gb=gb, module=module)


def _resident_gb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**30
    except (OSError, IndexError, ValueError):
        return 0.0


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints it
        workeroutput["peak_rss"] = dict(_PEAK)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):  # the xdist controller, as each worker ends
    peak = getattr(node, "workeroutput", {}).get("peak_rss")
    if peak:
        _WORKER_PEAKS[node.gateway.id] = peak


def pytest_terminal_summary(terminalreporter):
    peaks = _WORKER_PEAKS or ({"main": _PEAK} if _PEAK["gb"] else {})
    for worker, peak in sorted(peaks.items()):
        kept = ", ".join(f"{m} +{gb:.1f}" for gb, m in sorted(peak["kept"], reverse=True)[:_KEPT_SHOWN])
        terminalreporter.write_line(
            f"peak RSS {worker}: {peak['gb']:.1f} GB (reached in {peak['module']}); kept most (GB): {kept or '-'}"
        )


def _trim() -> None:
    import ctypes
    import ctypes.util
    import gc
    import sys

    # aiohttp caches each (handler, apps) middleware chain in a module-level lru_cache (a private name, hence the
    # guard): it kept a closed test gateway, its GatewayState and its engine (1.2 GB after test_security) alive
    cached = getattr(sys.modules.get("aiohttp.web_app"), "_cached_build_middleware", None)
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()
    if "jax" in sys.modules:  # compiled programs and traces of the module's functions (the next module compiles
        sys.modules["jax"].clear_caches()  # its own, or loads them from the persistent cache)
    gc.collect()
    libc = ctypes.util.find_library("c")
    if libc is not None and hasattr(ctypes.CDLL(libc), "malloc_trim"):
        ctypes.CDLL(libc).malloc_trim(0)


_MODULE_START = {"module": None, "gb": 0.0}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After a module's last test (its module fixtures and engines torn down): collect, then hand glibc's free
    heap back to the OS. Without it a worker's RSS only grows: an engine's ~3 GB stays mapped after it is freed,
    two workers reached 9 and 11 GB next to a Gemma server and the OOM killer took one (pytest-xdist then
    waits forever). With it a freed SmolLM2 engine's 2.9 GB drops to 0.2 GB.

    This runs here, after the protocol, and not in a module fixture's teardown: the module's fixtures are
    torn down inside its last test's teardown, while that test's ``funcargs`` still hold them (pytest clears
    them after the teardown), so a fixture's trim found the engines alive: a Gemma parity module read
    "+3.4 GB kept" with no engine or HF model left alive once the test had ended."""
    module = getattr(getattr(item, "module", None), "__name__", item.nodeid)
    if _MODULE_START["module"] != module:
        _MODULE_START.update(module=module, gb=_resident_gb())
    result = yield
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        _note_peak(module)
        _trim()
        kept = _resident_gb() - _MODULE_START["gb"]
        if kept > 0.05:
            _PEAK["kept"] = sorted([*_PEAK["kept"], (kept, module)], reverse=True)[:_KEPT_SHOWN]
        _MODULE_START["module"] = None
    return result


@pytest.fixture(scope="module")
def smollm2():  # per module, not per session: the engine holds 1.9 GB, freed (and trimmed) after each module
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    return Generator("smollm2-135m", dtype="float32", attention_backend="xla")


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory) -> str:
    """A tiny random Llama GGUF (tests/support/tiny_gguf.py), written once per test process."""
    from tests.support.tiny_gguf import write_tiny_llama

    return str(write_tiny_llama(tmp_path_factory.mktemp("tiny")).path)
