"""The validation engine over Spark Connect: a client in a child process (a process holds either a
classic session or a Connect client, and this module's neighbours hold a classic one) against the
suite's real Spark Connect server (the ``spark_connect_server`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[2]).getOrCreate()
from _spark_plans import cases_df, cases_plan, good_row
from contract_gate_spark.validation.diagnostics import split
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.runtime.session import get_session
df = cases_df(spark, [good_row(day=1), good_row(day=1), good_row(day=2, count=-1), good_row(day=3)])
report = run_validation(get_session(), cases_plan(), df)
valid, invalid = split(df, cases_plan())
print(json.dumps({
    "connect": type(spark).__module__, "reused": get_session() is spark, "outcome": report["outcome"],
    "rows": report["rows"], "failed": {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]},
    "split": [valid.count(), sorted(e.rule_id for row in invalid.collect() for e in row._errors)]}))
spark.stop()
"""


@pytest.mark.slow  # the Spark Connect server, a JVM of its own
def test_the_engine_validates_and_splits_over_spark_connect(spark_connect_server, tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, str(TESTS), spark_connect_server.url], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["connect"] == "pyspark.sql.connect.session" and result["reused"] is True
    assert result["outcome"] == "fail" and result["rows"] == {"valid": 1, "invalid": 3}
    assert result["failed"] == {"case_count.minimum": 1, "key.unique": 2}
    assert result["split"] == [1, ["case_count.minimum", "key.unique", "key.unique"]]
