"""Run a child process with its output streamed into the task log, killable as a whole.

Shared by the runners that start ``spark-submit`` on the worker. The child gets its own process
group, so killing the task also kills the JVM and the Python workers spark-submit started
(a plain ``Popen.kill`` would orphan them); a job whose task is killed with SIGKILL ends that
group itself (``contract_gate_spark.runtime.task_watch``). The last lines are kept so that a failed job's
error (the Python traceback or the Spark exception) is repeated in the task's failure message.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections import deque

from contract_gate.runners.base import GateJobError, GateJobStopped

TAIL_LINES = 40
KILL_GRACE_SECONDS = 10


class StreamedProcess:
    """One child process; ``run`` blocks until it exits, ``kill`` may be called from another thread."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: str, log: logging.Logger, label: str,
                 handed_fds: tuple[int, ...] = ()):
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.log = log
        self.label = label
        self.handed_fds = handed_fds  # the child's from its start: closed here once it runs
        self.process: subprocess.Popen | None = None
        self.killed = False

    def run(self) -> None:
        """Run to completion; raise :class:`GateJobError` with the output's tail on a non-zero exit."""
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        try:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                bufsize=1,
                start_new_session=True,
                pass_fds=self.handed_fds,
            )
        finally:
            for descriptor in self.handed_fds:  # what they hold (a lock) is the child's alone now
                os.close(descriptor)
        self.log.info("%s started (pid %s)", self.label, self.process.pid)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            self.log.info("%s", line)
        code = self.process.wait()
        if self.killed:
            raise GateJobStopped(f"{self.label} was killed")
        if code != 0:
            raise GateJobError(f"{self.label} failed with exit code {code}:\n" + _error_excerpt(list(tail)))

    def kill(self) -> None:
        """SIGTERM the process group, SIGKILL it if it is still there after a grace period."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        self.killed = True
        self.log.warning("killing %s (process group %s)", self.label, process.pid)
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _error_excerpt(lines: list[str]) -> str:
    """From the last traceback or exception line on: the part of the tail a reader needs."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("Traceback (most recent call last)"):
            return "\n".join(lines[index:])
    return "\n".join(lines[-15:])
