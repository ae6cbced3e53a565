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
command line. It imports the Connect client (seconds of CPU: pandas, pyarrow, grpc) only once its
job has run ``PREPARE_AFTER`` seconds: a short job's watcher costs next to nothing, and a long
one's acts within a second or two of its worker's death, however busy the machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO

DONE = "done"
PREPARE_AFTER = 5.0  # seconds of a job after which its watcher imports the Connect client


class ConnectFence:
    """The watcher of one job's Connect sessions (a context manager: ``done`` on exit)."""

    def __init__(self, url: str) -> None:
        self._watcher = subprocess.Popen([sys.executable, "-m", "contract_gate.runners.connect_fence"],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self._pipe: IO[str] = self._watcher.stdin  # type: ignore[assignment]  # stdin=PIPE
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
        self._watcher.wait(timeout=60)

    def __enter__(self) -> ConnectFence:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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


def watch(pipe: IO[str]) -> int:
    """The watcher: read the URL and session ids; on EOF without ``done``, end the sessions."""
    first = pipe.readline()
    if not first:
        return 0
    url = json.loads(first)["url"]
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
