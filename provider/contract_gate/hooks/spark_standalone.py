"""The Spark standalone master's REST submission API: create a Python driver in cluster deploy
mode, read its status, kill it; sync for the runner, async for the trigger.

``spark-submit --deploy-mode cluster`` refuses Python applications on a standalone master
("Cluster deploy mode is currently not supported for python applications on standalone
clusters", still so in Spark 4.2). The master's REST server (``spark.master.rest.enabled=true``,
port 6066 by default) does not look at the language: it launches any main class in a driver on
a worker. Its driver runs ``org.apache.spark.deploy.PythonRunner`` (the class spark-submit runs
for a Python application in client mode) with the script, the ``--py-files`` list and the
arguments, so the driver, its Python process and the ``spark.jars.packages`` resolution all
happen on the cluster.

``GET /v1/submissions/status/<driverId>`` answers the driver's state. A master that no longer
knows the driver (``success: false``, e.g. after a master restart without recovery) is terminal
too: waiting would never end.
"""

from __future__ import annotations

import asyncio
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import httpx
from airflow.sdk import BaseHook

PYTHON_RUNNER = "org.apache.spark.deploy.PythonRunner"
# org.apache.spark.deploy.master.DriverState: the states a driver never leaves.
TERMINAL_STATES = frozenset({"FINISHED", "FAILED", "KILLED", "ERROR"})
# The master names drivers driver-<yyyyMMddHHmmss>-<n>; nothing else goes into a URL path.
DRIVER_ID = re.compile(r"driver-[0-9]+-[0-9]+")
REQUEST_TIMEOUT_SECONDS = 30


class SparkStandaloneError(RuntimeError):
    """The master cannot be reached, or refused the driver."""


def checked_driver_id(driver_id: object) -> str:
    """``driver_id`` as the master gave it, checked: it goes into URLs."""
    if not isinstance(driver_id, str) or not DRIVER_ID.fullmatch(driver_id):
        raise ValueError(f"{driver_id!r} is not a standalone driver id (driver-<timestamp>-<n>)")
    return driver_id


def status_event(driver_id: str, response: dict) -> dict | None:
    """The terminal event for a ``SubmissionStatusResponse`` (driver id, state, worker, the
    master's message), or ``None`` while the driver runs."""
    if not response.get("success", False):
        return {"driver_id": driver_id, "driver_state": "UNKNOWN", "worker": None,
                "message": str(response.get("message") or "the master does not know this driver")}
    state = str(response.get("driverState", ""))
    if state not in TERMINAL_STATES:
        return None
    return {"driver_id": driver_id, "driver_state": state, "worker": response.get("workerHostPort"),
            "message": str(response.get("message") or "")}


def client_spark_version() -> str:
    """Our pyspark's version (the server only logs a mismatch), when pyspark is installed here."""
    try:
        return version("pyspark")
    except PackageNotFoundError:
        return "unknown"


class SparkStandaloneRestHook(BaseHook):
    """A standalone master's REST submission server.

    :param rest_url: e.g. ``http://spark-master:6066`` (``SparkSubmitHook`` derives it from the
        ``spark`` connection's ``rest-port``/``rest-scheme`` extras).
    """

    hook_name = "Spark standalone REST submission"

    def __init__(self, rest_url: str) -> None:
        super().__init__()
        self.rest_url = rest_url.rstrip("/")

    def url(self, action: str, driver_id: str | None = None) -> str:
        return f"{self.rest_url}/v1/submissions/{action}" + (f"/{checked_driver_id(driver_id)}" if driver_id else "")

    def create_python_driver(self, script: Path, py_files: list[Path], arguments: list[str],
                             properties: dict[str, str], environment: dict[str, str]) -> str:
        """Launch ``script`` as a driver on the cluster, with ``environment`` added to the
        driver's; the driver id the master gave it. ``script`` and ``py_files`` must be paths
        the cluster's workers can read."""
        request = {
            "action": "CreateSubmissionRequest",
            "appResource": script.as_uri(),
            "mainClass": PYTHON_RUNNER,
            # PythonRunner's arguments: the script, the comma-separated py-files, the app's arguments.
            "appArgs": [str(script), ",".join(str(path) for path in py_files), *arguments],
            "clientSparkVersion": client_spark_version(),
            "environmentVariables": environment,
            "sparkProperties": {**properties, "spark.submit.deployMode": "cluster",
                                "spark.submit.pyFiles": ",".join(str(path) for path in py_files)},
        }
        try:
            response = httpx.post(self.url("create"), json=request, timeout=REQUEST_TIMEOUT_SECONDS)
        except httpx.HTTPError as exc:
            raise SparkStandaloneError(f"the standalone master's REST server {self.rest_url} cannot be reached "
                                       f"({exc}); start the master with spark.master.rest.enabled=true") from exc
        answer = _json(response)
        if not answer.get("success"):
            raise SparkStandaloneError(f"the standalone master {self.rest_url} refused the gate job's driver: "
                                       f"{answer.get('message') or response.text}")
        return checked_driver_id(answer.get("submissionId"))

    def kill(self, driver_id: str) -> str:
        """Ask the master to kill the driver; the master's answer."""
        response = httpx.post(self.url("kill", driver_id), timeout=REQUEST_TIMEOUT_SECONDS)
        return str(_json(response).get("message", ""))

    async def a_kill(self, driver_id: str) -> str:
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_SECONDS) as client:
            response = await client.post(self.url("kill", driver_id))
        return str(_json(response).get("message", ""))

    async def a_status(self, driver_id: str) -> dict:
        """The master's ``SubmissionStatusResponse`` for the driver."""
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_SECONDS) as client:
            response = await client.get(self.url("status", driver_id))
        response.raise_for_status()
        return response.json()

    async def a_wait_for_driver(self, driver_id: str, polling_period_seconds: float) -> dict:
        """Poll the driver's status until it is terminal: its :func:`status_event`."""
        while True:
            status = await self.a_status(driver_id)
            event = status_event(driver_id, status)
            if event is not None:
                return event
            self.log.info("Spark driver %s: %s", driver_id, status.get("driverState"))
            await asyncio.sleep(polling_period_seconds)

    def wait_for_driver(self, driver_id: str, polling_period_seconds: float, timeout: float | None = None) -> dict:
        """The blocking wait of a worker that does not defer: the trigger's polling, here; a
        ``TimeoutError`` when the driver still runs after ``timeout`` seconds."""
        return asyncio.run(asyncio.wait_for(self.a_wait_for_driver(driver_id, polling_period_seconds), timeout))

    def driver_event(self, driver_id: str) -> dict | None:
        """The driver's :func:`status_event` now: ``None`` while it runs."""
        return status_event(driver_id, asyncio.run(self.a_status(driver_id)))


def _json(response: httpx.Response) -> dict:
    try:
        return response.json()
    except ValueError:
        return {"success": False, "message": f"HTTP {response.status_code}: {response.text[:500]}"}
