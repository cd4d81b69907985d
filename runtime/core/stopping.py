"""Stop strings over streamed text.

Text arrives in deltas; a stop string may straddle two deltas, so the matcher holds back the last
``len(longest stop) - 1`` characters until it knows they do not begin a stop string. Output never
contains the stop string itself (OpenAI semantics).
"""

from __future__ import annotations

from collections.abc import Sequence


class StopStringMatcher:
    def __init__(self, stop: Sequence[str] = ()):
        self.stop = tuple(s for s in stop if s)
        self._hold = max((len(s) for s in self.stop), default=1) - 1
        self._text = ""  # everything received
        self._emitted = 0  # characters of _text already returned
        self.stopped = False

    def feed(self, delta: str) -> str:
        """Add a delta; return the text that is now safe to emit (possibly empty)."""
        if self.stopped:
            return ""
        start = max(0, len(self._text) - self._hold)  # a match can begin in the held-back tail
        self._text += delta
        hits = [i for i in (self._text.find(s, start) for s in self.stop) if i >= 0]
        if hits:
            self.stopped = True
            return self._take(min(hits))
        return self._take(len(self._text) - self._hold)

    def flush(self) -> str:
        """End of generation: release whatever was held back."""
        return "" if self.stopped else self._take(len(self._text))

    def _take(self, end: int) -> str:
        end = max(end, self._emitted)
        out = self._text[self._emitted : end]
        self._emitted = end
        return out
