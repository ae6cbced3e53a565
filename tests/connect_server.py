"""A real Spark Connect server with Delta, from the pip-installed pyspark, for the tests.

The command line is the product's local server (``contract_gate.local_spark.connect_server``:
``spark-submit --class ...SparkConnectServer`` in local mode on 127.0.0.1, Delta's jars from the
install's cache, Delta's SQL extension and catalog). The server is started *detached* (a
short-lived launcher process starts it in a new session and exits), so its JVM does not descend
from the test's process: a test can then check that a gate run in ``spark_connect`` mode starts
no Java process of its own. :meth:`ConnectServer.stop` ends it by its process id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import wait_until

from contract_gate.local_spark.connect_server import free_port, listening

START_TIMEOUT = 300  # a cold JVM on two shared cores, Delta's jars on the class path

_LAUNCHER = """
import subprocess, sys
argv, log = sys.argv[2:], open(sys.argv[1], "ab")
# a new session, no parent but init once this launcher exits: not a descendant of the test
server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
print(server.pid)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too (it cannot be, once the launcher exited: init reaps it)
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


class ConnectServer:
    """One detached Spark Connect server; ``url`` is its ``sc://127.0.0.1:<port>`` address."""

    def __init__(self, folder: Path, conf: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.conf = conf or {}  # more Spark settings (a test that reads the server's UI turns it on)
        self.port = free_port()
        self.log = folder / "connect-server.log"
        self.pid: int | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def server(self):
        """The product's local server (``contract_gate.local_spark.connect_server``) on this
        port, on two cores whatever the machine; started here through the detaching launcher."""
        from contract_gate.local_spark.connect_server import LocalConnectServer

        two_cores = {"spark.sql.shuffle.partitions": "2", "spark.databricks.delta.snapshotPartitions": "2"}
        return LocalConnectServer(self.folder, port=self.port, cores=2, conf={**two_cores, **self.conf},
                                  name="contract-gate-test-connect")

    def command(self) -> list[str]:
        return self.server().command()

    def start(self) -> "ConnectServer":
        env = self.server().environment()
        launched = subprocess.run([sys.executable, "-c", _LAUNCHER, str(self.log), *self.command()],
                                  env=env, cwd=self.folder, capture_output=True, text=True, check=True,
                                  timeout=60)
        self.pid = int(launched.stdout.strip())

        def ready() -> bool:
            if not _alive(self.pid):
                raise RuntimeError(f"the Spark Connect server exited; its log:\n{self.log.read_text()[-4000:]}")
            return listening(self.port)

        wait_until(ready, timeout=START_TIMEOUT, interval=0.2, message="the Spark Connect server listening")
        return self

    def stop(self) -> None:
        if self.pid is None or not _alive(self.pid):
            return
        os.kill(self.pid, signal.SIGTERM)
        try:
            wait_until(lambda: not _alive(self.pid), timeout=60, interval=0.1, message="the server stopping")
        except TimeoutError:
            os.kill(self.pid, signal.SIGKILL)
            wait_until(lambda: not _alive(self.pid), timeout=30, interval=0.1, message="the server killed")

    def connection(self) -> str:
        """The Airflow connection of this server, as ``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT`` takes it."""
        return self.server().connection()
