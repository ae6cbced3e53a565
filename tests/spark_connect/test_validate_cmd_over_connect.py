"""``contract-gate validate --remote sc://...`` (or ``SPARK_REMOTE``) is a thin Spark Connect client:
the suite's real Connect server reads the Parquet file and validates it, and no Java process
descends from the command while it runs. The flag wins over the variable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from java_processes import run_watching_java
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

ORDERS = str(Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml")


def _orders(path: Path) -> Path:
    """Three orders: one negative total, one unknown currency, one key twice."""
    pq.write_table(pa.table({
        "order_id": ["O1", "O2", "O2"], "customer_id": ["C1", "C2", "C3"], "order_total": [1.0, -1.0, 2.0],
        "currency": ["USD", "USD", "ABC"],
        "order_timestamp": pa.array([1_709_251_200_000_000] * 3, pa.timestamp("us", tz="UTC")),
    }), path)
    return path


def _validate(tmp_path: Path, name: str, *flags: str, remote_env: str | None = None):
    folder = tmp_path / name
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CONNECT_CLIENT_ENV}
    if remote_env:
        env["SPARK_REMOTE"] = remote_env
    report = folder / "report.json"
    argv = [sys.executable, "-m", "contract_gate.cli.main", "validate", ORDERS, "--format", "parquet",
            "--data", str(_orders(tmp_path / f"{name}.parquet")), "--report", str(report), *flags]
    done, java = run_watching_java(argv, env, folder)
    return done, java, json.loads(report.read_text()) if report.is_file() else None


@pytest.mark.slow  # the Spark Connect server and a CLI process
def test_validate_with_remote_runs_on_the_connect_server_and_starts_no_jvm(spark_connect_server, tmp_path):
    unreachable = "sc://127.0.0.1:9"  # the discard port: nothing listens
    runs = {
        "flag": _validate(tmp_path, "flag", "--remote", spark_connect_server.url),
        "variable": _validate(tmp_path, "variable", remote_env=spark_connect_server.url),
        "flag wins": _validate(tmp_path, "wins", "--remote", spark_connect_server.url, remote_env=unreachable),
    }

    for name, (done, java, report) in runs.items():
        assert done.returncode == 1, (name, done.stderr[-3000:])  # the batch fails its rules
        assert java == {}, f"{name}: Java started below the command: {java}"
        failed = {rule["id"]: rule["failed_rows"] for rule in report["rules"] if rule["passed"] is False}
        assert failed == {"order_total_not_negative": 1, "currency_allowed": 1, "key.unique": 2}, name
        assert report["candidate"]["row_count"] == 3 and "outcome: FAIL" in done.stdout


def test_an_unreachable_server_is_an_error_naming_the_data(tmp_path):
    done, java, report = _validate(tmp_path, "down", "--remote", "sc://127.0.0.1:9")

    assert done.returncode == 2 and report is None and java == {}
    assert "error: could not validate" in done.stderr
