"""A gate job's secret Spark settings (each S3 bucket's credentials from its connection,
``contract_gate.object_storage``) in an owner-only file, never on a command line: ``ps`` and
``/proc/<pid>/cmdline`` show a process's arguments to every user of the machine.

* ``spark-submit`` (the ``local`` mode; ``spark_submit`` through ``SparkSubmitHook``): a Java
  properties file for ``--properties-file`` (0600) in a private temporary folder (0700), removed
  when the job ends, fails or is killed. spark-submit reads ``spark-defaults.conf`` only without
  ``--properties-file``, so the file starts with that file's lines (``SPARK_CONF_DIR``, else the
  Spark home's ``conf/``): a cluster's defaults still apply, whatever its Spark version.
* a standalone cluster's driver (cluster deploy mode through the master's REST server): the
  cluster would put every submitted setting on the driver JVM's command line, so the settings go
  into a JSON file (0600) of the job's work folder, the shared storage the driver already reads its
  plan from, named to the driver by ``CONTRACT_GATE_SPARK_SETTINGS_FILE``
  (``contract_gate_spark.runtime.private_settings``), and removed once the driver has ended.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from contract_gate_plan.restricted import write_private_text
from contract_gate_spark.runtime.private_settings import SETTINGS_FILE_ENV

PROPERTIES_NAME = "job.properties"
_ESCAPED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f",
            "=": "\\=", ":": "\\:", "#": "\\#", "!": "\\!", " ": "\\ "}


def properties_text(settings: dict[str, str], defaults: str = "") -> str:
    """``settings`` as Java properties (every special character escaped), after ``defaults``."""
    head = defaults if not defaults or defaults.endswith("\n") else defaults + "\n"
    return head + "".join(f"{_escape(key)}={_escape(value)}\n" for key, value in settings.items())


def spark_defaults(spark_home: str | os.PathLike | None) -> str:
    """The ``spark-defaults.conf`` spark-submit would read without ``--properties-file``; "" without one."""
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (Path(spark_home) / "conf" if spark_home else None)
    path = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""


class PropertiesFile:
    """One job's ``--properties-file`` in a private temporary folder; ``path`` is None without settings.

    A context manager: the folder is removed on leaving it; :meth:`remove` may also be called from
    another thread (a task's ``on_kill``)."""

    def __init__(self, settings: dict[str, str], spark_home: str | os.PathLike | None = None) -> None:
        self.settings = dict(settings)
        self.spark_home = spark_home
        self.folder: Path | None = None

    @property
    def path(self) -> Path | None:
        return self.folder / PROPERTIES_NAME if self.folder is not None else None

    def __enter__(self) -> Path | None:
        if self.settings:
            self.folder = Path(tempfile.mkdtemp(prefix="contract-gate-job-"))  # 0700
            write_private_text(self.folder / PROPERTIES_NAME,
                               properties_text(self.settings, spark_defaults(self.spark_home)))
        return self.path

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def driver_settings_file(workdir: Path, steps: str) -> Path:
    """Where a standalone cluster-mode driver of ``steps`` finds its secret settings."""
    return workdir / f".{steps.replace('+', '_')}.spark-settings.json"


def write_driver_settings(workdir: Path, steps: str, settings: dict[str, str]) -> dict[str, str]:
    """Write ``settings`` for a standalone driver; the environment variable that names the file
    ({} without settings)."""
    if not settings:
        return {}
    path = driver_settings_file(workdir, steps)
    write_private_text(path, json.dumps(settings))
    return {SETTINGS_FILE_ENV: str(path)}


def _escape(text: str) -> str:
    return "".join(_ESCAPED.get(char, char) for char in text)
