"""The advisor, in one package: it reads a gateway's metrics, names the bottleneck, and proves the remedy.

    python -m gateway.advise --url http://127.0.0.1:8000 [--window 15m] [--ttft-slo 1.0] [--tpot-slo 0.1] [--json]
    python -m gateway.advise --replay RECORDING --try KEY=VALUE ...          (before/after on the engine)
    python -m gateway.advise --tune --recording R [--url ...] [--window 30m]  (candidates screened, leaders confirmed)

    metrics.py    Prometheus text parsed, differenced over a window, histograms merged (plain data)
    history.py    DiagnosisHistory: the gateway's readings of its own registry, for a window
    symptoms.py   the symptom-to-remedy tree: one function per branch, ``diagnose`` and ``report``
    recording.py  the recording format: the gateway's traffic-shape Recorder, and its readers
    replay.py     a recording replayed on engine configurations, in-process (runtime.replay drives the engine)
    tune.py       candidate changes from a diagnosis, screened, the leaders confirmed by a permutation test
    cli.py        the command line (``__main__.py`` runs it)

Layering: this package sits in the gateway layer; the runtime knows nothing of recordings or findings.
Only ``replay.py`` reaches an engine, through ``runtime.replay``, and only when a replay runs.
"""

from __future__ import annotations

from gateway.advise.cli import main
from gateway.advise.metrics import Histogram, histogram_quantile, parse, subtract
from gateway.advise.symptoms import MIN_REQUESTS, TPOT_SLO, TTFT_SLO, Finding, diagnose, report

__all__ = [
    "MIN_REQUESTS",
    "TPOT_SLO",
    "TTFT_SLO",
    "Finding",
    "Histogram",
    "diagnose",
    "histogram_quantile",
    "main",
    "parse",
    "report",
    "subtract",
]
