"""The install's JVM runs (Ivy fetches, the Delta round trip, the class archive build) write to a
log file, not the terminal.

A fresh install's terminal shows the install's own lines only; Ivy's resolution report and Spark's
``WARN`` lines go to ``~/.cache/contract-gate/install/<step>.log`` (the newest run's only), and a
step that fails names its log and shows its last lines.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

TAIL_LINES = 20


def cache_folder() -> Path:
    """contract-gate's per-user cache: ``$XDG_CACHE_HOME/contract-gate``, else ``~/.cache/contract-gate``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "contract-gate"


def log_path(step: str) -> Path:
    return cache_folder() / "install" / f"{step}.log"


def run_logged(argv: list[str], step: str, **kwargs: Any) -> subprocess.CompletedProcess:
    """``subprocess.run(argv)`` with its stdout and stderr in ``step``'s log; never raises on exit codes."""
    log = log_path(step)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        return subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False, **kwargs)


def failure(message: str, step: str) -> str:
    """``message``, then where ``step``'s output is and its last lines: an install step's error."""
    log = log_path(step)
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-TAIL_LINES:]
    except OSError:
        return message
    return "\n".join([f"{message}; its output: {log}, ending:", *(f"  {line}" for line in lines)])
