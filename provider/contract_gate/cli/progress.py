"""A progress line on stderr while a command waits for Spark or Airflow, on a terminal only.

Piped or redirected, the command writes nothing extra. With ``--verbose`` the logs show the
progress instead, and a spinner redrawn between log lines would only garble them.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, TextIO

FRAMES = "|/-\\"
REDRAW_SECONDS = 0.2


class Progress:
    """One line, ``contract-gate: <step> <frame> <seconds> s``, redrawn in place until closed."""

    def __init__(self, stream: TextIO, step: str) -> None:
        self._stream = stream
        self._step = step
        self._started = time.monotonic()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._frame = 0
        self._width = 0
        self._thread = threading.Thread(target=self._spin, name="contract-gate-progress", daemon=True)

    def start(self) -> Progress:
        self._draw()
        self._thread.start()
        return self

    def step(self, step: str) -> None:
        """Name the step the command has reached."""
        with self._lock:
            self._step = step
        self._draw()

    def close(self) -> None:
        self._stopped.set()
        self._thread.join()
        with self._lock:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()

    def _spin(self) -> None:
        while not self._stopped.wait(REDRAW_SECONDS):
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            if self._stopped.is_set():
                return
            seconds = int(time.monotonic() - self._started)
            line = f"contract-gate: {self._step} {FRAMES[self._frame % len(FRAMES)]} {seconds} s"
            self._frame += 1
            self._stream.write("\r" + line.ljust(self._width))
            self._stream.flush()
            self._width = max(self._width, len(line))


class _Silent:
    """What a command holds when no progress line is drawn."""

    def step(self, step: str) -> None:
        pass


@contextmanager
def progress(step: str, verbose: bool = False, stream: TextIO | None = None) -> Iterator[Progress | _Silent]:
    """A progress line on ``stream`` (default stderr) while the block runs, when it is a terminal
    and the command is not verbose; otherwise nothing is written."""
    stream = sys.stderr if stream is None else stream
    if verbose or not stream.isatty():
        yield _Silent()
        return
    shown = Progress(stream, step).start()
    try:
        yield shown
    finally:
        shown.close()
