"""Over Spark Connect, the failures the Spark side acts on carry the same error conditions as in
a classic session (``contract_gate_spark.runtime.errors``), causes included: a failure inside a task of a
MERGE is told by its cause, and a target CHECK violated by the publish step's MERGE is reported by
the constraint's name with the target unchanged. The client runs in a child process (a process
holds either a classic session or a Connect client) against the suite's real Spark Connect server
with Delta (the ``spark_connect_server`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

CHILD = """
import json, os, sys, tempfile
from pathlib import Path
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/gate_steps"]
from pyspark.sql import functions as F
from contract_gate_spark.runtime.session import connect
spark = connect(sys.argv[1])
from contract_gate_spark.runtime import errors
from _gate_plans import CASES_DDL, case, plan_for
from contract_gate_spark.steps.publish import ConstraintViolation, publish

def classify(action):
    try:
        action()
    except Exception as exc:
        sets = [name for name in ("TABLE_EXISTS", "NOTHING_TO_INFER", "USER_RAISED", "CHECK_VIOLATED",
                                  "NOT_NULL_VIOLATED") if errors.has_condition(exc, getattr(errors, name))]
        check = errors.find_error(exc, errors.CHECK_VIOLATED)
        return {"connect": type(exc).__module__, "sets": sets, "reported": errors.error_condition(exc),
                "chain": [e.condition for e in errors.spark_errors(exc)],
                "constraint": check.parameters.get("constraintName") if check else None}
    return None

def merge_raising():  # a failure inside a task of a MERGE: the publish step's key guard
    spark.sql(f"INSERT INTO {table} VALUES (7, 5)")
    spark.createDataFrame([(7, 5)], "id INT, n INT").createOrReplaceTempView("source")
    spark.sql(f"MERGE INTO {table} AS t USING source AS s ON t.id = s.id"
              " WHEN MATCHED THEN UPDATE SET t.id = raise_error('contract-gate:guard')"
              " WHEN NOT MATCHED THEN INSERT *").collect()

def publish_violating():  # the publish step's MERGE into a target whose CHECK the batch violates
    root = Path(folder) / "gate"
    plan = plan_for("regional_daily_cases", root)
    def candidate(name, rows):
        address = {"kind": "path", "path": str(root / "candidates" / name), "format": "delta"}
        spark.createDataFrame(rows, CASES_DDL).write.format("delta").save(address["path"])
        return address
    publish(spark, plan, "s1", candidate("s1", [case("NL-NH", 1)]), 0)
    target = plan["tables"]["target"]["path"]
    def state():
        return (spark.sql(f"DESCRIBE HISTORY delta.`{target}`").agg(F.max("version")).first()[0],
                sorted(tuple(r) for r in spark.read.format("delta").load(target).collect()))
    before, refused = state(), None
    try:
        publish(spark, plan, "s2", candidate("s2", [case("NL-UT", 1), case("NL-ZH", 1, status="bogus")]), 0)
    except ConstraintViolation as exc:
        refused = str(exc)
    return {"refused": refused, "unchanged": state() == before, "rows": len(before[1])}

folder = tempfile.mkdtemp(dir=os.getcwd())  # in the test's own folder
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
    "raise_error in a MERGE": classify(merge_raising),
    "publish": publish_violating(),
}))
spark.stop()
"""


@pytest.mark.slow  # the Spark Connect server, a JVM of its own
def test_spark_connect_failures_carry_the_classic_conditions(spark_connect_server, tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, spark_connect_server.url, str(TESTS)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    published = found.pop("publish")

    assert {result["connect"] for result in found.values()} == {"pyspark.errors.exceptions.connect"}
    assert {label: (r["sets"], r["reported"]) for label, r in found.items()} == {
        "created twice": (["TABLE_EXISTS"], "TABLE_OR_VIEW_ALREADY_EXISTS"),
        "empty folder": (["NOTHING_TO_INFER"], "UNABLE_TO_INFER_SCHEMA"),
        "raise_error": (["USER_RAISED"], "USER_RAISED_EXCEPTION"),
        "check": (["CHECK_VIOLATED"], "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
        "not null": (["NOT_NULL_VIOLATED"], "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
        # told by its cause, as in a classic session (tests/gate_steps/test_error_conditions.py)
        "raise_error in a MERGE": (["USER_RAISED"], "TASK_WRITE_FAILED"),
    }
    assert found["raise_error in a MERGE"]["chain"] == ["TASK_WRITE_FAILED", "USER_RAISED_EXCEPTION"]
    assert found["check"]["constraint"] == "positive"
    # the publish step names the constraint, quotes no value, and the target did not move
    assert published == {"refused": "target constraint cg_status_enum rejected rows of s2; nothing was published",
                         "unchanged": True, "rows": 1}
