"""The engines' output goes to a log file, not the terminal, unless the command is ``--verbose``.

Spark's JVM, Airflow's log lines and the Python warnings of the libraries below the gate all
write to file descriptor 2, and a JVM started by this process inherits it. While a command waits
for Spark or Airflow, descriptor 2 points at ``<work_dir>/cli/<command>.log``; the command's own
messages and its progress line go to the terminal, and an error names the log when it holds
something.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from contract_gate import config


def log_path(command: str) -> Path:
    """Where ``command``'s engine output goes (the newest run's only)."""
    return config.work_root() / "cli" / f"{command}.log"


@contextmanager
def engine_output_to(log: Path) -> Iterator[TextIO]:
    """For the block, send descriptor 2 to ``log``; yields the stream that still reaches the
    terminal (the command's ``sys.stderr`` as it was)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    for stream in (sys.stdout, sys.stderr, sys.__stderr__):
        if stream is not None:
            stream.flush()
    saved = os.dup(2)
    terminal = _terminal(saved)
    with open(log, "wb") as target:
        os.dup2(target.fileno(), 2)
    try:
        yield terminal
    finally:
        if sys.__stderr__ is not None:
            sys.__stderr__.flush()
        terminal.flush()
        os.dup2(saved, 2)
        os.close(saved)
        if terminal is not sys.stderr:
            terminal.close()


def _terminal(saved: int) -> TextIO:
    """The command's stderr, unless it writes to descriptor 2 itself: then a stream on the saved
    descriptor (a test's captured ``sys.stderr`` has no descriptor, and stays what it is)."""
    try:
        own = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        own = False
    if not own:
        return sys.stderr
    return os.fdopen(os.dup(saved), "w", encoding=sys.stderr.encoding, errors="replace")


def logged(log: Path) -> str:
    """`` (Spark's and Airflow's output: LOG)`` when the log holds anything, else ``""``: the
    end of an error line."""
    try:
        written = log.stat().st_size > 0
    except OSError:
        return ""
    return f" (Spark's and Airflow's output: {log})" if written else ""
