"""A real Spark Connect server with Delta, from the pip-installed pyspark, for the tests.

``spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer`` in local mode,
listening on 127.0.0.1 on a free port, with Delta's jars from the install's cache (as the local
runner finds them) and Delta's SQL extension and catalog. The server is started *detached* (a
short-lived launcher process starts it in a new session and exits), so its JVM does not descend
from the test's process: a test can then check that a gate run in ``spark_connect`` mode starts
no Java process of its own. :meth:`ConnectServer.stop` ends it by its process id.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from waiting import wait_until

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT = 300  # a cold JVM on two shared cores, Delta's jars on the class path

_LAUNCHER = """
import subprocess, sys
argv, log = sys.argv[2:], open(sys.argv[1], "ab")
# a new session, no parent but init once this launcher exits: not a descendant of the test
server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
print(server.pid)
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


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

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.log = folder / "connect-server.log"
        self.pid: int | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        from contract_gate.runners.local import delta_jars_on_disk, spark_home
        from spark_jobs.runtime.session import DELTA_CONF, DELTA_PACKAGE, NO_SUBSTITUTION

        jars = delta_jars_on_disk()
        conf = {
            "spark.master": "local[2]",
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.warehouse.dir": str(self.folder / "warehouse"),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.folder}",
            **NO_SUBSTITUTION,
            **DELTA_CONF,
        }
        argv = [str(spark_home() / "bin" / "spark-submit"), "--class", SERVER_CLASS,
                "--name", "contract-gate-test-connect",
                *(["--jars", ",".join(jars)] if jars else ["--packages", DELTA_PACKAGE])]
        for key, value in conf.items():
            argv += ["--conf", f"{key}={value}"]
        return [*argv, "spark-internal"]

    def start(self) -> "ConnectServer":
        from contract_gate.runners.local import spark_home

        env = {**os.environ, "SPARK_HOME": str(spark_home()), "PYSPARK_PYTHON": sys.executable}
        env.pop("SPARK_REMOTE", None)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        launched = subprocess.run([sys.executable, "-c", _LAUNCHER, str(self.log), *self.command()],
                                  env=env, cwd=self.folder, capture_output=True, text=True, check=True,
                                  timeout=60)
        self.pid = int(launched.stdout.strip())

        def ready() -> bool:
            if not _alive(self.pid):
                raise RuntimeError(f"the Spark Connect server exited; its log:\n{self.log.read_text()[-4000:]}")
            return _listening(self.port)

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
        return json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1", "port": self.port})
