"""``spark_submit``: any Spark cluster (standalone, YARN, Kubernetes) through the apache-spark
provider's ``SparkSubmitHook`` and its connection (default ``spark_default``).

The Spark side is shipped as a zip of the ``spark_jobs`` and ``contract_plan`` packages and
sqlglot (``--py-files``),
so the cluster needs nothing of ours installed. Delta comes from ``--packages`` unless the cluster
configuration already provides it (pass ``packages=None``). The result JSON is written by the
driver: in client deploy mode (the default) that is this worker; in cluster deploy mode,
``work_dir`` must be storage both the driver and the worker can read.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from contract_gate.runners.base import GateJob, GateRunner
from contract_gate.runners.local import gate_job_script

DEFAULT_CONN_ID = "spark_default"


def package_spark_jobs(folder: Path) -> Path:
    """A zip of the ``spark_jobs`` and ``contract_plan`` packages for ``--py-files`` (sources
    only), with sqlglot, their one dependency beyond pyspark and delta-spark (pure Python: the
    allow-list of contract SQL)."""
    import contract_plan
    import sqlglot

    archive = folder / "spark_jobs.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in (gate_job_script().parents[1], Path(contract_plan.__file__).parent, Path(sqlglot.__file__).parent):
            for path in sorted(package.rglob("*.py")):
                zf.write(path, Path(package.name) / path.relative_to(package))
    return archive


class SparkSubmitRunner(GateRunner):
    """spark-submit to the cluster in the connection; blocks while the job runs.

    :param packages: Maven coordinates to add (default: Delta Lake matching pyspark 4.2).
    """

    mode = "spark_submit"

    def __init__(self, *, packages: str | None = "default", **kwargs) -> None:
        super().__init__(**kwargs)
        self.conn_id = self.conn_id or DEFAULT_CONN_ID
        self.packages = packages
        self._hook = None

    def start(self, job: GateJob) -> dict:
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

        packages = self.packages
        if packages == "default":
            from spark_jobs.runtime.session import DELTA_CONF, DELTA_PACKAGE

            packages = DELTA_PACKAGE
            conf = {**DELTA_CONF, **self.spark_conf}
        else:
            conf = dict(self.spark_conf)
        self._hook = SparkSubmitHook(
            conn_id=self.conn_id,
            conf=conf,
            packages=packages,
            py_files=str(package_spark_jobs(job.workdir)),
            name=job.name,
            application_args=job.argv(),
            # The driver runs here in client mode: it must use this interpreter (it has pyspark).
            env_vars={"PYSPARK_DRIVER_PYTHON": sys.executable},
        )
        self.log.info("gate job %s: spark-submit through connection %r", job.steps, self.conn_id)
        self._hook.submit(application=str(gate_job_script()))
        return job.read_result()

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()

