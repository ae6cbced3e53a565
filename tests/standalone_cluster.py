"""A real Spark standalone cluster for the tests: one master and one worker, from the
pip-installed pyspark (``spark-class org.apache.spark.deploy.master.Master`` / ``...Worker``).

Everything listens on 127.0.0.1 on free ports (``SPARK_LOCAL_IP`` keeps the web UIs off other
interfaces), the master's REST submission server is on (cluster deploy mode goes through it),
and the worker keeps its drivers' and executors' folders in ``work_dir``. Each daemon runs in
its own process group, stopped (and waited for) by :meth:`StandaloneCluster.stop`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

from waiting import wait_until

START_TIMEOUT = 180  # two cold JVMs on shared cores


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """``master_url`` (``spark://127.0.0.1:<port>``), ``rest_port``, ``web_url`` and
    ``work_dir`` (the worker's); :meth:`state` is the master's JSON view."""

    def __init__(self, folder: Path, *, cores: int = 2, memory: str = "3g") -> None:
        self.folder = folder
        self.work_dir = folder / "worker"
        self.master_port, self.rest_port, self.web_port = free_port(), free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"
        self.rest_url = f"http://127.0.0.1:{self.rest_port}"
        self.web_url = f"http://127.0.0.1:{self.web_port}"
        self.cores, self.memory = cores, memory
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _daemon(self, name: str, arguments: list[str], extra_env: dict[str, str]) -> None:
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(self.folder), **extra_env}
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - closed when the daemon is stopped
        self.processes.append(subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *arguments], env=env, stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, start_new_session=True))
        log.close()  # the child holds its own descriptor

    def start(self) -> None:
        """Start the master, then the worker, and wait until the worker has registered; a daemon
        already started is stopped again when the start fails."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.work_dir.mkdir(exist_ok=True)
        self._daemon("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                "--port", str(self.master_port), "--webui-port", str(self.web_port)],
                     {"SPARK_MASTER_OPTS": f"-Dspark.master.rest.enabled=true -Dspark.master.rest.port={self.rest_port}"})
        wait_until(lambda: self._alive() and self.state(), timeout=START_TIMEOUT, interval=0.5,
                   message=f"the standalone master on {self.master_url} (log: {self.folder / 'master.log'})")
        self._daemon("worker", ["org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                                "--port", str(free_port()), "--webui-port", str(free_port()),
                                "--cores", str(self.cores), "--memory", self.memory,
                                "--work-dir", str(self.work_dir)], {})
        wait_until(lambda: self._alive() and self.state().get("aliveworkers") == 1, timeout=START_TIMEOUT,
                   interval=0.5, message=f"a worker registered with {self.master_url} "
                                         f"(log: {self.folder / 'worker.log'})")

    def _alive(self) -> bool:
        for process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"a Spark daemon exited with {process.returncode}; see the logs in {self.folder}")
        return True

    def state(self) -> dict:
        """The master's ``/json/`` view (workers, applications, drivers), ``{}`` before it is up
        (no answer, or its web UI not serving the JSON yet)."""
        try:
            with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as response:
                return json.load(response)
        except (OSError, ValueError):
            return {}

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
