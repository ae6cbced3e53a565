"""A gate job whose driver runs beside its task dies with its task.

The ``local`` runner, and the ``spark_submit`` runner in client deploy mode, start the job
(spark-submit, then its JVM, this Python driver and Spark's Python workers) in a process group of
its own and name its task's process in ``CONTRACT_GATE_TASK_PID``. When that task is killed with SIGKILL (an OOM kill, ``kill -9``, a
lost worker slot), nothing tells its children: without this watch they run on as orphans, a
validation for minutes, a publish up to its commit. So the job's driver polls the task's
process, and once it is gone, SIGKILLs the job's whole process group: the JVM, which runs every
commit, and every Python process of the job, at once.

A watch thread rather than a parent-death signal (``PR_SET_PDEATHSIG``): that signal reaches one
process, the direct child, and only when the *thread* that started it ends; the group kill
reaches every process of the job. The task is told from a process that reused its pid by its
start time (``/proc/<pid>/stat``). The decision never depends on how fast this is: it waits
for the job's lock (``contract_gate.work_folders.job_fence``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

TASK_PID_ENV = "CONTRACT_GATE_TASK_PID"
POLL_SECONDS = 0.25


def watch_task() -> None:
    """Start watching the task named in ``CONTRACT_GATE_TASK_PID``, if any (the local runner's jobs);
    end the job now when the task is already gone."""
    named = os.environ.get(TASK_PID_ENV)
    if not named:
        return
    pid = int(named)
    try:
        if os.getpgid(pid) == os.getpgrp():  # not a group of the job's own: never kill the task's
            return
    except ProcessLookupError:  # gone before the job got here
        _end_job()
    seen = _identity(pid)
    if seen is None:
        _end_job()
    threading.Thread(target=_watch, args=(pid, seen), name="contract-gate-task-watch", daemon=True).start()


def _watch(pid: int, seen: str) -> None:
    while _identity(pid) == seen:
        time.sleep(POLL_SECONDS)
    _end_job()


def _identity(pid: int) -> str | None:
    """The process's start time (a pid reused by another process has another), or None once it
    has ended (a zombie has ended: it only waits to be reaped)."""
    stat = Path(f"/proc/{pid}/stat")
    if not Path("/proc/self/stat").exists():  # no procfs: alive or not is all there is to know
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return "alive"
    try:
        state, *fields = stat.read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if state in ("Z", "X") else fields[18]  # field 22 of the line: starttime


def _end_job() -> None:
    os.killpg(os.getpgrp(), signal.SIGKILL)
