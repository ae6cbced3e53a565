"""``contract-gate validate`` without a Spark Connect address starts local Spark the way the local
runner starts a gate job (``contract_gate.local_spark.submit.local_start_conf``): one driver JVM, Delta's jars
from the install's cache on its class path, the short-job JVM options and the class archive when
built, and no Ivy resolution printed."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contract_gate.local_spark import class_archive
from contract_gate.local_spark.installation import delta_jars_on_disk
from contract_gate.local_spark.submit import SHORT_JOB_JVM_OPTIONS
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV
from java_processes import run_watching_java

ORDERS = str(Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml")


@pytest.mark.slow  # a JVM of its own: 15-30 s on two shared cores
def test_validate_starts_local_spark_like_the_local_runner_without_ivy(tmp_path):
    jars = delta_jars_on_disk()
    assert jars, "the install's Delta jars are not in the cache (python -m contract_gate_spark.runtime.jars)"
    data = tmp_path / "orders.parquet"
    pq.write_table(pa.table({
        "order_id": ["O1", "O2"], "customer_id": ["C1", "C2"], "order_total": [1.0, -1.0],
        "currency": ["USD", "EUR"], "order_timestamp": pa.array([1_709_251_200_000_000] * 2, pa.timestamp("us", tz="UTC")),
    }), data)
    env = {k: v for k, v in os.environ.items() if k not in CONNECT_CLIENT_ENV}
    report = tmp_path / "report.json"

    done, java = run_watching_java([sys.executable, "-m", "contract_gate.cli.main", "validate", ORDERS,
                                    "--input-format", "parquet", "--data", str(data), "--report", str(report)],
                                   env, tmp_path)

    assert done.returncode == 1, done.stderr[-3000:]
    failed = {rule["id"]: rule["failed_rows"] for rule in json.loads(report.read_text())["rules"]
              if rule["passed"] is False}
    assert failed == {"order_total_not_negative": 1}
    assert not re.search(r"resolving dependencies|ivy", done.stderr, re.IGNORECASE), done.stderr[-3000:]
    # piped: no progress line, and the failing batch's JSON log line only with --verbose
    assert "contract-gate: " not in done.stderr and "contract_gate.validation" not in done.stderr, done.stderr[-3000:]
    # spark-submit's launcher (a JVM that only builds the command line), then the driver
    drivers = [" ".join(command) for command in java.values() if "org.apache.spark.launcher.Main" not in command]
    assert len(drivers) == 1, java
    command = drivers[0]
    class_path = re.search(r" -cp (\S+)", command).group(1).split(os.pathsep)
    assert class_path[:len(jars)] == jars  # Delta's jars first, as the local runner puts them
    assert SHORT_JOB_JVM_OPTIONS in command
    archive = class_archive.java_options()
    assert (bool(archive) and archive in command) or (not archive and "SharedArchiveFile" not in command)
    # Spark's, the JVM's and Hadoop's scratch files (rows, unpacked native libraries, S3A's upload
    # buffers) in one owner-only folder of the command's, removed when it exits: none in /tmp
    scratch = re.search(r"-Djava\.io\.tmpdir=(\S+)", command).group(1)
    assert f"spark.local.dir={scratch}" in command and f"spark.hadoop.hadoop.tmp.dir={scratch}" in command
    assert not Path(scratch).exists()
