"""A Spark Connect server with Delta on this machine, from the pip-installed pyspark.

One warm Spark for many gates: the quick start's demo gates its batches through one such server
(the ``spark_connect`` mode) instead of starting two cold Spark JVMs per gate, and the tests and
benchmarks start theirs from the same command line. It is ``spark-submit --class
...SparkConnectServer`` in local mode, listening on 127.0.0.1 only, with Delta's jars from the
install's cache (as the local runner finds them), Delta's SQL extension and catalog, no ``${...}``
substitution in SQL text, and its warehouse and Derby files in its own folder.

It listens without authentication, for this machine's own processes: a Connect server shared by
a team is the platform's, with its token and TLS (docs/execution-modes.md).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from contract_gate.local_spark.installation import delta_jars_on_disk, spark_home
from contract_gate.local_spark.submit import submit_argv
from contract_gate_plan.restricted import make_private_folder
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT = 300  # a cold JVM with Delta's jars, on a small shared machine


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class LocalConnectServer:
    """One Spark Connect server on 127.0.0.1; ``url`` is its ``sc://`` address.

    :param folder: its log (``connect-server.log``), warehouse and Derby files.
    :param port: default a free port.
    :param cores: local cores for Spark (default: all of this machine's).
    :param conf: more Spark settings for the server.
    """

    def __init__(self, folder: Path, *, port: int | None = None, cores: int | None = None,
                 conf: dict[str, str] | None = None, name: str = "contract-gate-connect") -> None:
        self.folder = Path(folder)
        self.port = port or free_port()
        self.cores = cores or os.cpu_count() or 1
        self.conf = conf or {}
        self.name = name
        self.log = self.folder / "connect-server.log"
        self.process: subprocess.Popen | None = None

    @property
    def scratch(self) -> Path:
        """Spark's local directory (shuffle, spill and broadcast files), the JVM's temporary
        folder (clients' artifacts, unpacked native libraries) and Hadoop's (S3A's upload
        buffers), owner-only."""
        return self.folder / "spark-local"

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def connection(self) -> str:
        """This server as the apache-spark provider's connection, in the JSON form that
        ``AIRFLOW_CONN_SPARK_CONNECT_DEFAULT`` takes."""
        return json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1", "port": self.port})

    def command(self) -> list[str]:
        from contract_gate_spark.runtime.session import DELTA_PACKAGE, local_defaults  # imports pyspark: not at import time

        jars = delta_jars_on_disk()
        conf = {
            **local_defaults(self.cores),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.enabled": "false",
            "spark.default.parallelism": str(self.cores),
            "spark.sql.warehouse.dir": str(self.folder / "warehouse"),
            # shuffle and spill files and S3A's upload buffers hold rows, clients' artifacts are
            # code: owner-only, not in the world-readable /tmp (artifacts go to the JVM's temporary
            # folder, S3A's buffers to Hadoop's)
            "spark.local.dir": str(self.scratch),
            "spark.hadoop.hadoop.tmp.dir": str(self.scratch),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.folder} -Djava.io.tmpdir={self.scratch}",
            **({"spark.jars": ",".join(jars)} if jars else {"spark.jars.packages": DELTA_PACKAGE}),
            **self.conf,
        }
        return submit_argv("spark-internal", [], conf, self.name, main_class=SERVER_CLASS)

    def environment(self) -> dict[str, str]:
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "PYSPARK_PYTHON": sys.executable}
        for name in CONNECT_CLIENT_ENV:  # this process's client settings
            env.pop(name, None)
        return env

    def start(self, timeout: float = START_TIMEOUT) -> LocalConnectServer:
        """Start the server and return once it accepts connections."""
        self.launch()
        return self.wait(timeout)

    def launch(self) -> None:
        """Start the server's JVM (in a session of its own) without waiting for it: the caller
        can do its own set-up while the JVM starts, then :meth:`wait`."""
        self.folder.mkdir(parents=True, exist_ok=True)
        make_private_folder(self.scratch)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(self.command(), env=self.environment(), cwd=self.folder,
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)

    def wait(self, timeout: float = START_TIMEOUT) -> LocalConnectServer:
        """Return once the launched server accepts connections; raise with its log if it exits."""
        process = self.process
        if process is None:
            raise RuntimeError("the Spark Connect server was not launched: call launch() before wait()")
        deadline = time.monotonic() + timeout
        while not listening(self.port):
            if process.poll() is not None:
                raise RuntimeError(f"the Spark Connect server exited with {process.returncode}; "
                                   f"its log {self.log}:\n{self.log.read_text(errors='replace')[-4000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the Spark Connect server did not listen on port {self.port} "
                                   f"within {timeout:.0f} s; its log: {self.log}")
            time.sleep(0.2)  # polling the port: a condition, not a fixed wait
        return self

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after 60 s) and wait for it."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def __enter__(self) -> LocalConnectServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
