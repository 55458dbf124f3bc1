"""A minimal progress line on stderr, drawn only when stderr is a terminal.

With a known total it is a bar (``update(done)``); without one it shows a
spinner and the elapsed time (``tick()``), for work that reports no steps.

>>> import io
>>> bar = Progress(10, stream=io.StringIO())  # not a terminal: draws nothing
>>> bar.update(5); bar.close()
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

WIDTH = 30
#: redraw at most this often, so a fast loop is not slowed by the terminal
MIN_INTERVAL = 0.1
_SPIN = "|/-\\"


class Progress:
    """Progress of ``total`` steps (None: unknown) on ``stream``, silent unless a TTY."""

    def __init__(self, total: int | None, label: str = "", stream: TextIO | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.total = total
        self.label = label
        self.enabled = _is_tty(self.stream)
        self._start = time.monotonic()
        self._last = 0.0
        self._ticks = 0
        self._drawn = False
        self._lock = threading.Lock()

    def update(self, done: int) -> None:
        """Show that ``done`` of ``total`` steps are finished."""
        if not self.enabled or self.total is None:
            return
        now = time.monotonic()
        if now - self._last < MIN_INTERVAL and done < self.total:
            return
        self._last = now
        fraction = min(1.0, done / max(1, self.total))
        filled = int(WIDTH * fraction)
        bar = "#" * filled + "-" * (WIDTH - filled)
        self._draw(f"{self.label}[{bar}] {done}/{self.total} {now - self._start:5.1f}s")

    def tick(self) -> None:
        """Show that work goes on (spinner and elapsed time)."""
        if not self.enabled:
            return
        self._ticks += 1
        elapsed = time.monotonic() - self._start
        self._draw(f"{self.label}{_SPIN[self._ticks % len(_SPIN)]} {elapsed:5.1f}s")

    def close(self) -> None:
        """Erase the line so the result starts on a clean line."""
        with self._lock:
            if self.enabled and self._drawn:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self._drawn = False
            self.enabled = False

    def _draw(self, text: str) -> None:
        with self._lock:
            if not self.enabled:
                return
            self.stream.write(f"\r{text}\033[K")
            self.stream.flush()
            self._drawn = True


class StagedProgress:
    """One bar per stage of a long job, the previous one closed when the next begins: call it as
    ``progress(stage, done, total)`` (what seed_scale and pipeline_bench report); ``close()`` at the end.

    >>> import io
    >>> progress = StagedProgress("seed ", stream=io.StringIO())
    >>> progress("users", 1, 2); progress("bots", 1, 5); progress.close()
    """

    def __init__(self, label: str = "", stream: TextIO | None = None):
        self.label = label
        self.stream = stream
        self._bars: dict[str, Progress] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        bar = self._bars.get(stage)
        if bar is None:
            for other in self._bars.values():
                other.close()
            bar = self._bars[stage] = Progress(total, label=f"{self.label}{stage} ", stream=self.stream)
        bar.update(done)

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
