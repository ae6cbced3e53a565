"""The Spark standalone master's REST submission API: submit a Python driver in cluster deploy
mode, and kill it.

``spark-submit --deploy-mode cluster`` refuses Python applications on a standalone master
("Cluster deploy mode is currently not supported for python applications on standalone
clusters", still so in Spark 4.2). The master's REST server (``spark.master.rest.enabled=true``)
does not look at the language: it launches any main class in a driver on a worker. Its driver
runs ``org.apache.spark.deploy.PythonRunner`` (the class spark-submit runs for a Python
application in client mode) with the script, the ``--py-files`` list and the arguments. So the
driver, its Python process and the ``spark.jars.packages`` resolution all happen on the cluster.

Driver status is read by :mod:`contract_gate.triggers.spark_driver` (one reading of it).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from contract_gate.runners.base import GateJobError
from contract_gate.triggers.spark_driver import REQUEST_TIMEOUT_SECONDS, checked_driver_id, kill_url

PYTHON_RUNNER = "org.apache.spark.deploy.PythonRunner"


def client_spark_version() -> str:
    """Our pyspark's version (the server only logs a mismatch), when pyspark is installed here."""
    try:
        return version("pyspark")
    except PackageNotFoundError:
        return "unknown"


def submit_python(rest_url: str, script: Path, py_files: list[Path], arguments: list[str],
                  properties: dict[str, str], environment: dict[str, str]) -> str:
    """Launch ``script`` as a driver on the cluster, with ``environment`` added to the driver's;
    the driver id the master gave it. ``script`` and ``py_files`` must be paths the cluster's
    workers can read."""
    import httpx

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
    url = f"{rest_url.rstrip('/')}/v1/submissions/create"
    try:
        response = httpx.post(url, json=request, timeout=REQUEST_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise GateJobError(f"the standalone master's REST server {rest_url} cannot be reached ({exc}); "
                           "start the master with spark.master.rest.enabled=true") from exc
    answer = _json(response)
    if not answer.get("success"):
        raise GateJobError(f"the standalone master {rest_url} refused the gate job's driver: "
                           f"{answer.get('message') or response.text}")
    return checked_driver_id(answer.get("submissionId"))


def kill(rest_url: str, driver_id: str) -> str:
    """Ask the master to kill the driver; the master's answer."""
    import httpx

    response = httpx.post(kill_url(rest_url, driver_id), timeout=REQUEST_TIMEOUT_SECONDS)
    return str(_json(response).get("message", ""))


def _json(response) -> dict:
    try:
        return response.json()
    except ValueError:
        return {"success": False, "message": f"HTTP {response.status_code}: {response.text[:500]}"}
