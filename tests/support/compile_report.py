"""Where the suite's time goes to JAX: per test, the seconds spent tracing, lowering and compiling (XLA, or
reading the persistent cache), and how many programs; per jitted function, the same. A pytest plugin, on
only when ``JAXSERVE_COMPILE_REPORT`` names a folder (tests/conftest.py registers it):

    JAXSERVE_COMPILE_REPORT=/tmp/compiles .venv/bin/python -m pytest -n 2 --dist loadfile ...
    .venv/bin/python scripts/compile_report.py /tmp/compiles          # the tables

Each process that runs tests writes ``<folder>/<worker>.json`` at its end (not xdist's controller: it only
relays the workers' reports). The figures come from JAX's own monitoring events
(``jax.monitoring``: ``/jax/core/compile/jaxpr_trace_duration``, ``.../jaxpr_to_mlir_module_duration``,
``.../backend_compile_duration``), the same ones ``jax_log_compiles`` prints; a compile on a background
thread (an engine's warm-up) counts for the test running at the time. Issue 33: a cold run's pytest time
was mostly compiling, and this says which tests and which functions."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
}
CACHE_HIT = "/jax/compilation_cache/cache_hits"


class CompileReport:
    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.current = "(outside tests)"
        self.tests: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.functions: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.registered = False

    def _register(self) -> None:
        if self.registered:
            return
        import jax

        jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        jax.monitoring.register_event_listener(self._on_event)
        self.registered = True

    def _on_duration(self, event: str, duration: float, **kwargs) -> None:
        phase = EVENTS.get(event)
        if phase is None:
            return
        test = self.tests[self.current]
        test[phase] += duration
        fun = self.functions[str(kwargs.get("fun_name", "?"))]
        fun[phase] += duration
        if phase == "compile":
            test["programs"] += 1
            fun["programs"] += 1

    def _on_event(self, event: str, **kwargs) -> None:
        if event == CACHE_HIT:
            self.tests[self.current]["cache_hits"] += 1

    # ---- pytest hooks
    def pytest_runtest_logstart(self, nodeid, location):
        self._register()  # JAX is imported by now (conftest's configure_xla)
        self.current = nodeid

    def pytest_runtest_logreport(self, report):
        self.tests[report.nodeid]["seconds"] += report.duration

    def pytest_sessionfinish(self, session):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {"tests": self.tests, "functions": self.functions}
        (self.folder / f"{worker}.json").write_text(json.dumps(data, indent=0))


def read_reports(folder: Path) -> tuple[dict, dict]:
    """A run's worker files in ``folder``, added up: ({test nodeid: {field: value}}, {function: {field: value}})."""
    tests: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    functions: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    files = sorted(Path(folder).glob("*.json"))
    if not files:
        raise SystemExit(f"no worker reports in {folder}")
    for path in files:
        data = json.loads(path.read_text())
        for table, into in ((data["tests"], tests), (data["functions"], functions)):
            for name, row in table.items():
                for k, v in row.items():
                    into[name][k] += v
    return tests, functions
