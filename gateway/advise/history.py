"""The gateway's memory of its own metrics, for a diagnosis over a window (``GET /dashboard/diagnosis``).

The dashboard's sampler (``gateway.observability.dashboard``, on the event loop) calls ``tick`` every few
seconds; every ``interval`` seconds it keeps one parsed reading of the whole registry. ``window`` answers
the registry's change over the last minutes (``metrics.subtract`` of now and an old reading), which
``symptoms.report`` diagnoses.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable

from prometheus_client import generate_latest

from gateway.advise.metrics import parse, subtract

log = logging.getLogger("gateway.advise.history")


class DiagnosisHistory:
    """The whole registry, parsed (``gateway.advise.metrics.parse``), every ``interval`` seconds for ``keep``
    readings (30 s x 240: the last two hours). A diagnosis over a window differences the registry now with
    the last reading at least ``window`` old (``metrics.subtract``); a gateway younger than the window is
    diagnosed over its whole life (counters start at zero), and the answer says which it was. A ``deque``
    with ``maxlen`` drops the oldest reading as a new one comes."""

    EMPTY = {"values": {}, "hists": {}, "counters": set()}

    def __init__(self, registry_of: Callable[[], object], *, interval: float = 30.0, keep: int = 240, clock=time.time):
        self.registry_of, self.interval, self.clock = registry_of, interval, clock
        self.ring: deque[tuple[float, dict]] = deque(maxlen=keep)
        self.started = clock()
        self._last = -math.inf

    def read(self) -> dict:
        return parse(generate_latest(self.registry_of()).decode())

    def tick(self) -> None:
        """Record a reading when ``interval`` has passed since the last (the dashboard's sampler calls it)."""
        now = self.clock()
        if now - self._last >= self.interval:
            try:
                self.ring.append((now, self.read()))
            except Exception:
                log.warning("diagnosis: reading the metrics registry failed", exc_info=True)
            self._last = now

    def window(self, seconds: float) -> tuple[dict, float]:
        """(the registry's change over the last ``seconds``, the seconds that change covers)."""
        now = self.clock()
        base_t, base = self.started, self.EMPTY
        for t, reading in self.ring:  # oldest first: the last reading at least ``seconds`` old
            if now - t >= seconds:
                base_t, base = t, reading
            else:
                break
        return subtract(self.read(), base), now - base_t
