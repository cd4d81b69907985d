"""Small fakes whose behaviour a test can work out by hand."""

from __future__ import annotations


class FakeClock:
    """A clock for code that takes ``clock=`` (a zero-argument callable returning seconds).

    ``FakeClock(t)`` stands still at ``t`` until a test moves ``clock.t``; ``FakeClock(0.0, step=1.0)``
    advances by ``step`` before each reading (1.0, 2.0, ...), so every event gets its own time.
    """

    def __init__(self, t: float = 1_000_000.0, step: float = 0.0):
        self.t = t
        self.step = step

    def __call__(self) -> float:
        self.t += self.step
        return self.t
