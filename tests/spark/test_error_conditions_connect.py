"""Over Spark Connect, the failures the Spark side acts on carry the same error conditions as in
a classic session (``spark_jobs.runtime.errors``). The client runs in a child process (a process
holds either a classic session or a Connect client) against the suite's real Spark Connect server
with Delta (the ``spark_connect_server`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, os, sys, tempfile
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
from spark_jobs.runtime import errors

def classify(action):
    try:
        action()
    except Exception as exc:
        sets = [name for name in ("TABLE_EXISTS", "NOTHING_TO_INFER", "USER_RAISED", "CHECK_VIOLATED",
                                  "NOT_NULL_VIOLATED") if errors.has_condition(exc, getattr(errors, name))]
        check = errors.find_error(exc, errors.CHECK_VIOLATED)
        return {"connect": type(exc).__module__, "sets": sets, "reported": errors.error_condition(exc),
                "constraint": check.parameters.get("constraintName") if check else None}
    return None

folder = tempfile.mkdtemp()
os.makedirs(folder + "/empty")
table = f"delta.`{folder}/t`"
spark.sql(f"CREATE TABLE {table} (id INT NOT NULL, n INT) USING DELTA")
spark.sql(f"ALTER TABLE {table} ADD CONSTRAINT positive CHECK (n > 0)")
print(json.dumps({
    "created twice": classify(lambda: spark.sql(f"CREATE TABLE {table} (id INT) USING DELTA")),
    "empty folder": classify(lambda: spark.read.format("csv").load(folder + "/empty").schema),
    "raise_error": classify(lambda: spark.range(1).select(F.raise_error(F.lit("x"))).collect()),
    "check": classify(lambda: spark.sql(f"INSERT INTO {table} VALUES (1, -5)")),
    "not null": classify(lambda: spark.sql(f"INSERT INTO {table} VALUES (NULL, 5)")),
}))
spark.stop()
"""


def test_spark_connect_failures_carry_the_classic_conditions(spark_connect_server, tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, spark_connect_server.url], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])

    assert {result["connect"] for result in found.values()} == {"pyspark.errors.exceptions.connect"}
    assert {label: (r["sets"], r["reported"]) for label, r in found.items()} == {
        "created twice": (["TABLE_EXISTS"], "TABLE_OR_VIEW_ALREADY_EXISTS"),
        "empty folder": (["NOTHING_TO_INFER"], "UNABLE_TO_INFER_SCHEMA"),
        "raise_error": (["USER_RAISED"], "USER_RAISED_EXCEPTION"),
        "check": (["CHECK_VIOLATED"], "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
        "not null": (["NOT_NULL_VIOLATED"], "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
    }
    assert found["check"]["constraint"] == "positive"
