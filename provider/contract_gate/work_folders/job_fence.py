"""The fence between a submission's local gate jobs and its decision: nothing commits after the verdict.

A job whose driver runs on this worker (a ``local`` job, a ``spark_submit`` driver in client
deploy mode) holds a shared lock on its submission's
``job.lock`` for as long as any process of it that can commit lives: the lock is taken on an
open file that the job's first process inherits (and, through ``exec``, its JVM, which runs
every commit), and the kernel releases a ``flock`` only when the last process holding that open
file has ended, however it ended (``kill -9`` included). The record task takes the lock
exclusively around the write of the decision, so while it writes, no process of any of the
submission's jobs exists, and none can commit afterwards.

Why this and not the publish re-checking the decision log just before it commits: a check and a
commit are two steps, and a decision written between them still lands before the commit. The
lock has no such gap: the kernel decides, and it knows when a process is gone. (An orphaned job
dies of its own accord within a second of its task, ``contract_gate_spark.runtime.task_watch``;
the fence is what makes that a matter of cleanliness, not of correctness.)

The lock lives in the submission's work folder, so it fences jobs on this machine: the local mode's
case, and a client-mode driver's, where jobs and the record task share the worker. Remote modes
stop their jobs on the engine (a Spark Connect execution ends with its stream, a Databricks run is
cancelled, a standalone cluster-mode driver is killed: ``GateRunner.end_orphaned_jobs``).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "job.lock"
WAIT_SECONDS = 120
"""How long a decision waits for a job of its submission to be gone: far beyond the second an
orphaned local job takes to die, short of a worker's heartbeat timeout."""


class JobStillRunning(RuntimeError):
    """A job of the submission still runs: no decision may be written before it is gone."""


def hold_for_job(folder: Path) -> int:
    """A descriptor holding a shared lock on ``folder``'s job lock, for the job's first process to
    inherit (``pass_fds``); the caller closes its own copy once the process runs."""
    descriptor = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH)  # waits while a decision is being written
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextmanager
def no_job_running(folder: Path, timeout: float = WAIT_SECONDS) -> Iterator[None]:
    """Inside, no process of a local job of ``folder``'s submission exists, nor can one start.
    Raises :class:`JobStillRunning` when one is still there after ``timeout`` seconds."""
    try:
        descriptor = os.open(folder / LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:  # no local job ran for this submission
        yield
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise JobStillRunning(
                        f"a gate job of this submission still runs after {timeout:.0f} s (its lock {folder / LOCK_NAME}"
                        " is held): no decision is written while it could still commit; retry once it is gone"
                    ) from None
                time.sleep(0.2)
        yield
    finally:
        os.close(descriptor)  # releases the lock
