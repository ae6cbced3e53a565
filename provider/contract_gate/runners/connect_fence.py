"""The fence of a ``spark_connect`` job: a worker lost without a word stops its queries on the server.

A Spark Connect 4.2 server does not notice that the client of a running execution died: a
non-reattachable execute is served on the gRPC call's own thread, so the call's cancellation is
delivered only after the execution ends, and a query of a worker killed with SIGKILL (or the
OOM killer) runs on to its end (measured: a contract query of hours still running 120 s after
its client's SIGKILL); a reattachable one waits for its client for minutes. So each job of the
``spark_connect`` runner starts a small watcher process and holds a pipe to it, on which the runner writes the server session ids of the job (its own, and each
session cloned from it, ``contract_gate_spark.runtime.session.watch_sessions``). When the job
ends, the runner writes ``done``; when the pipe closes without it, the worker died, and the
watcher interrupts every operation of those sessions and releases them on the server.

The watcher runs in a session of its own, so a kill of the worker's process group leaves it
alive; it reads the connection's URL (which may carry a token) from the pipe, never from its
command line. It is forked from the worker once the worker has imported the Connect client and
before the worker opens its first gRPC channel: it then starts at no cost and acts at once, with
the client loaded (a fresh interpreter and that import are seconds of CPU: pandas, pyarrow, grpc,
which ten jobs at once on two cores felt). A worker that has connected before (the CLI, a
notebook, the tests: gRPC's threads are not copied by a fork, and a forked child must not use
it) starts a new interpreter instead, which imports the client only once its job has run
``PREPARE_AFTER`` seconds: a short job's watcher costs next to nothing, and a long one's acts
within a second or two of its worker's death, however busy the machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO

DONE = "done"
PREPARE_AFTER = 5.0  # seconds of a job after which its watcher imports the Connect client


class ConnectFence:
    """The watcher of one job's Connect sessions (a context manager: ``done`` on exit). Create it
    before the job connects (``contract_gate_spark.runtime.session.connect``)."""

    def __init__(self, url: str) -> None:
        from contract_gate_spark.runtime.session import has_connected  # pyspark: only when a job starts

        if has_connected():
            self._watcher: subprocess.Popen | int = subprocess.Popen(
                [sys.executable, "-m", "contract_gate.runners.connect_fence"], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
            self._pipe: IO[str] = self._watcher.stdin  # type: ignore[assignment]  # stdin=PIPE
        else:
            prepare()
            self._watcher, self._pipe = _fork_watcher()
        self._send(json.dumps({"url": url}))

    def watch(self, session_id: str) -> None:
        """End this server session too if the worker dies."""
        self._send(session_id)

    def _send(self, line: str) -> None:
        self._pipe.write(line + "\n")
        self._pipe.flush()

    def close(self) -> None:
        """The job ended (or was stopped and interrupted by the runner itself): the watcher exits."""
        try:
            self._send(DONE)
            self._pipe.close()
        except OSError:  # a watcher that is gone already has nothing to do
            pass
        if isinstance(self._watcher, subprocess.Popen):
            self._watcher.wait(timeout=60)
        else:
            _reap(self._watcher, timeout=60)

    def __enter__(self) -> ConnectFence:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _fork_watcher() -> tuple[int, IO[str]]:
    """A watcher forked from this process: (its pid, the pipe to it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the watcher: never returns into the worker's code
        code = 1
        try:
            os.close(write)
            _detach(keep=read)
            code = watch(os.fdopen(read, encoding="utf-8"), prepared=True)
        finally:
            os._exit(code)
    os.close(read)
    return pid, os.fdopen(write, "w", encoding="utf-8")


def _detach(keep: int) -> None:
    """What a new interpreter started with ``start_new_session`` and no inherited files would be:
    a session of its own, default signal handling (not the worker's: Airflow's SIGTERM handler
    would stop a task), standard streams on /dev/null, no file of the worker's but ``keep`` (an
    inherited socket would hold the supervisor's end of the task's streams open)."""
    os.setsid()
    for number in signal.valid_signals():
        try:
            if callable(signal.getsignal(number)):
                signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP and the like
            continue
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.closerange(3, keep)
    os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))


def _reap(pid: int, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for the forked watcher to exit, as ``Popen.wait`` would."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                return
        except ChildProcessError:  # reaped already (a process that ignores SIGCHLD reaps none itself)
            return
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(f"connect fence {pid}", timeout)
        time.sleep(0.01)  # it exits as soon as it reads "done": a few milliseconds


def with_session(url: str, session_id: str) -> str:
    """``url`` (``sc://host:port[/;param=value...]``) addressing the server session ``session_id``."""
    return f"{url};session_id={session_id}" if "/;" in url else f"{url.rstrip('/')}/;session_id={session_id}"


def prepare() -> None:
    """Import the Connect client, so that ending the sessions takes no import."""
    # the Connect client (grpcio, pandas, pyarrow) only for a job that runs long: see the module's docstring
    import pyspark.sql.connect.session  # noqa: F401


def end_sessions(url: str, session_ids: list[str]) -> None:
    """Interrupt every operation of each server session and release it."""
    # the Connect client (grpcio, pandas, pyarrow) only now, if prepare() has not imported it
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    for session_id in session_ids:
        session = ConnectSession.builder.remote(with_session(url, session_id)).create()
        try:
            session.interruptAll()
            session.client.release_session()
        finally:
            session.client.close()


def watch(pipe: IO[str], prepared: bool = False) -> int:
    """The watcher: read the URL and session ids; on EOF without ``done``, end the sessions.
    ``prepared``: the Connect client is imported already (a forked watcher)."""
    first = pipe.readline()
    if not first:
        return 0
    url = json.loads(first)["url"]
    if not prepared:
        preparing = threading.Timer(PREPARE_AFTER, prepare)
        preparing.daemon = True  # a job that ends first: the watcher exits without it
        preparing.start()
    session_ids: list[str] = []
    for line in pipe:
        line = line.strip()
        if line == DONE:
            return 0
        session_ids.append(line)
    end_sessions(url, session_ids)
    return 0


if __name__ == "__main__":
    sys.exit(watch(sys.stdin))
