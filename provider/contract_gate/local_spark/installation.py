"""Where this machine's Spark, the gate job and Delta's jars are, found without importing pyspark."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def spark_home() -> Path:
    """``SPARK_HOME``, else the pyspark package (found without importing it)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed: pip install 'airflow-provider-contract-gate[spark]'")
    return Path(spec.submodule_search_locations[0])


def spark_package_folder() -> Path:
    spec = importlib.util.find_spec("contract_gate_spark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the contract_gate_spark package is not installed next to contract_gate")
    return Path(spec.submodule_search_locations[0])


def gate_job_script() -> Path:
    return spark_package_folder() / "commands" / "gate_job.py"


def delta_jars_on_disk() -> list[str]:
    """Delta's jars from ``.jars/`` or the Ivy cache, or ``[]`` when Ivy has to resolve them."""
    from contract_gate_spark.runtime.session import DELTA_PACKAGE, local_jars  # imports pyspark: not at import time

    jars = local_jars()
    if not jars:
        group, artifact, version = DELTA_PACKAGE.split(":")
        ivy_jars = Path(os.environ.get("CONTRACT_GATE_IVY_JARS", Path.home() / ".ivy2.5.2" / "jars"))
        cached = [ivy_jars / f"{group}_{artifact}-{version}.jar", ivy_jars / f"io.delta_delta-storage-{version}.jar"]
        jars = [str(path) for path in cached] if all(path.is_file() for path in cached) else []
    return jars
