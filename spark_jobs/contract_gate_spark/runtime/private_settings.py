"""Spark settings that hold secrets (a bucket's S3A credentials), read by a driver that a cluster
launched from an owner-only file instead of its command line.

A standalone cluster starts a submitted driver with every Spark setting as a ``-D`` option of its
JVM, which any user of the cluster's machine reads with ``ps``. So the Airflow side leaves the
secret settings out of the submission, writes them into a file of the job's work folder and names
that file in the driver's environment; the driver adds them to its session before the session
starts (``contract_gate_spark.runtime.session.get_session``), and its executors fetch them from the driver.
"""

from __future__ import annotations

import json
import os

SETTINGS_FILE_ENV = "CONTRACT_GATE_SPARK_SETTINGS_FILE"


def read_private_settings() -> dict[str, str]:
    """The settings of the file ``CONTRACT_GATE_SPARK_SETTINGS_FILE`` names; {} when none is named."""
    path = os.environ.get(SETTINGS_FILE_ENV)
    if not path:
        return {}
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
        raise ValueError(f"{path}: expected a JSON object of Spark setting names to strings")
    return settings
