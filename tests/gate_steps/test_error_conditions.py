"""Spark and Delta failures are told apart by their error conditions and Delta's exception types
(``contract_gate_spark.runtime.errors``), never by their message: each failure a step acts on is caused
for real here, classified, and the step's resulting behaviour checked."""

from __future__ import annotations

import uuid
from datetime import date

import pytest
from delta import exceptions as delta_errors
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from _gate_plans import case, cases_df, plan_for, table_rows, version_of, write_csv
from contract_gate_spark.runtime.errors import (
    CHECK_VIOLATED,
    NON_EMPTY_LOCATION,
    NOT_NULL_VIOLATED,
    NOTHING_TO_INFER,
    PATH_EXISTS,
    TABLE_EXISTS,
    USER_RAISED,
    error_condition,
    find_error,
    has_condition,
    spark_errors,
)
from contract_gate_spark.steps.commits import CONFLICTS, retry_conflicts
from contract_gate_spark.steps.publish import ConstraintViolation, publish
from contract_gate_spark.steps.stage import stage_candidate

SETS = {"TABLE_EXISTS": TABLE_EXISTS, "PATH_EXISTS": PATH_EXISTS, "NON_EMPTY_LOCATION": NON_EMPTY_LOCATION,
        "NOTHING_TO_INFER": NOTHING_TO_INFER, "USER_RAISED": USER_RAISED, "CHECK_VIOLATED": CHECK_VIOLATED,
        "NOT_NULL_VIOLATED": NOT_NULL_VIOLATED}


def _failure(action) -> BaseException:
    with pytest.raises(Exception) as raised:
        action()
    return raised.value


def _name() -> str:
    return f"cg_errors_{uuid.uuid4().hex[:10]}"


def _created_twice(spark, tmp_path):
    name = _name()
    spark.sql(f"CREATE TABLE {name} (a INT) USING DELTA")
    return _failure(lambda: spark.sql(f"CREATE TABLE {name} (a INT) USING DELTA"))


def _path_created_twice(spark, tmp_path):
    spark.sql(f"CREATE TABLE delta.`{tmp_path}/t` (a INT) USING DELTA")
    return _failure(lambda: spark.sql(f"CREATE TABLE delta.`{tmp_path}/t` (a INT) USING DELTA"))


def _written_twice(spark, tmp_path):  # the stage step's CREATE TABLE AS SELECT of a candidate
    batch = spark.range(2).withColumnRenamed("id", "a")
    batch.writeTo(f"delta.`{tmp_path}/c`").using("delta").create()
    return _failure(lambda: batch.writeTo(f"delta.`{tmp_path}/c`").using("delta").create())


def _saved_twice(spark, tmp_path):  # ``save`` refuses an existing table by its path
    batch = spark.range(2)
    batch.write.format("delta").save(f"{tmp_path}/s")
    return _failure(lambda: batch.write.format("delta").save(f"{tmp_path}/s"))


def _non_empty_location(spark, tmp_path):  # a twin's table folder, before its first commit
    (tmp_path / "twin").mkdir()
    (tmp_path / "twin" / "part-0.parquet").write_bytes(b"not yet a table")
    statement = f"CREATE TABLE IF NOT EXISTS {_name()} (a INT) USING DELTA LOCATION '{tmp_path}/twin'"
    return _failure(lambda: spark.sql(statement))


def _empty_folder(spark, tmp_path):
    (tmp_path / "landing").mkdir()
    return _failure(lambda: spark.read.format("csv").load(str(tmp_path / "landing")).schema)


def _constrained(spark, tmp_path) -> str:
    spark.sql(f"CREATE TABLE delta.`{tmp_path}/k` (id INT NOT NULL, n INT) USING DELTA")
    spark.sql(f"ALTER TABLE delta.`{tmp_path}/k` ADD CONSTRAINT positive CHECK (n > 0)")
    return f"delta.`{tmp_path}/k`"


def _check_violated(spark, tmp_path):
    return _failure(lambda: spark.sql(f"INSERT INTO {_constrained(spark, tmp_path)} VALUES (1, -987654)"))


def _null_written(spark, tmp_path):
    return _failure(lambda: spark.sql(f"INSERT INTO {_constrained(spark, tmp_path)} VALUES (NULL, 5)"))


def _raised_in_a_merge(spark, tmp_path):  # the publish step's key guard, as it surfaces
    from delta.tables import DeltaTable

    spark.sql(f"INSERT INTO {_constrained(spark, tmp_path)} VALUES (1, 5)")
    merge = (DeltaTable.forPath(spark, f"{tmp_path}/k").alias("t")
             .merge(spark.createDataFrame([(1, 5)], "id INT, n INT").alias("s"), "t.id = s.id")
             .whenMatchedUpdate(set={"id": F.raise_error(F.lit("contract-gate:guard"))})
             .whenNotMatchedInsertAll())
    return _failure(merge.execute)


FAILURES = {  # failure -> (the set that must match it, the condition of the failure itself)
    "a table created twice": (_created_twice, "TABLE_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS"),
    "a path table created twice": (_path_created_twice, "TABLE_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS"),
    "a candidate written twice": (_written_twice, "TABLE_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS"),
    "a path table saved twice": (_saved_twice, "PATH_EXISTS", "DELTA_PATH_EXISTS"),
    "a table at a non-empty location": (_non_empty_location, "NON_EMPTY_LOCATION",
                                        "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"),
    "the schema of an empty folder": (_empty_folder, "NOTHING_TO_INFER", "UNABLE_TO_INFER_SCHEMA"),
    "a CHECK constraint violated": (_check_violated, "CHECK_VIOLATED", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"),
    "a NULL in a NOT NULL column": (_null_written, "NOT_NULL_VIOLATED", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
    # the task's failure is the cause of the driver's: only the cause chain tells it
    "raise_error inside a MERGE": (_raised_in_a_merge, "USER_RAISED", "TASK_WRITE_FAILED"),
}


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_each_failure_a_step_acts_on_is_told_by_its_condition(spark, tmp_path, failure):
    cause, expected, outermost = FAILURES[failure]

    exc = cause(spark, tmp_path)

    assert {name for name, conditions in SETS.items() if has_condition(exc, conditions)} == {expected}
    assert error_condition(exc) == outermost == spark_errors(exc)[0].condition


def test_the_parameters_name_the_constraint_and_the_guard_not_the_row(spark, tmp_path):
    check = find_error(_check_violated(spark, tmp_path), CHECK_VIOLATED)
    guard = find_error(_raised_in_a_merge(spark, tmp_path / "merge"), USER_RAISED)

    assert check.parameters["constraintName"] == "positive"
    assert "987654" in check.parameters["values"]  # why a step reads one named parameter only
    assert guard.parameters == {"errorMessage": "contract-gate:guard"}


def test_a_message_that_quotes_a_condition_is_not_that_condition(spark):
    text = "[TABLE_OR_VIEW_ALREADY_EXISTS] DELTA_PATH_EXISTS UNABLE_TO_INFER_SCHEMA DELTA_VIOLATE_CONSTRAINT"
    exc = _failure(lambda: spark.range(1).select(F.raise_error(F.lit(text))).collect())

    assert [name for name, conditions in SETS.items() if has_condition(exc, conditions)] == ["USER_RAISED"]
    assert error_condition(exc) == "USER_RAISED_EXCEPTION"


def test_a_failure_without_a_condition_is_named_by_its_type_never_its_message():
    exc = ValueError("secret-value-42")

    assert spark_errors(exc) == [] and not has_condition(exc, TABLE_EXISTS)
    assert error_condition(exc) == "ValueError"


def _candidate(spark, tmp_path, name, rows):
    address = {"kind": "path", "path": str(tmp_path / "candidates" / name), "format": "delta"}
    cases_df(spark, rows).write.format("delta").save(address["path"])
    return address


def _published_once(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    publish(spark, plan, "s1", _candidate(spark, tmp_path, "s1", [case("NL-NH", 1)]), 0)
    target = plan["tables"]["target"]
    return plan, target, version_of(spark, target), sorted(table_rows(spark, target))


def test_a_row_whose_value_spells_the_key_guard_is_still_a_constraint_violation(spark, tmp_path):
    """Delta's message quotes the violating row; when the text was searched, a producer's value
    equal to the guard's text turned a CHECK violation into a key rejection."""
    plan, target, version, rows = _published_once(spark, tmp_path)
    hostile = _candidate(spark, tmp_path, "s2", [case("NL-UT", 1, status="contract-gate:key.unique_across_batches")])

    with pytest.raises(ConstraintViolation) as refused:
        publish(spark, plan, "s2", hostile, 0)

    assert "cg_status_enum" in str(refused.value) and "contract-gate:key" not in str(refused.value)
    assert (version_of(spark, target), sorted(table_rows(spark, target))) == (version, rows)


def test_a_null_in_a_required_column_is_refused_by_the_targets_not_null(spark, tmp_path):
    plan, target, version, rows = _published_once(spark, tmp_path)
    candidate = _candidate(spark, tmp_path, "s2", [("NL-UT", date(2024, 3, 1), None, 3, "final")])

    with pytest.raises(ConstraintViolation, match="target constraint NOT NULL rejected rows of s2"):
        publish(spark, plan, "s2", candidate, 0)

    assert (version_of(spark, target), sorted(table_rows(spark, target))) == (version, rows)


def test_an_empty_landing_folder_stages_an_empty_batch_and_a_missing_one_fails(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    (tmp_path / "lakehouse/landing/regional_daily_cases").mkdir(parents=True)

    staged = stage_candidate(spark, plan, "empty")

    assert (staged["status"], staged["row_count"]) == ("staged", 0)
    missing = _failure(lambda: stage_candidate(spark, plan, "missing", str(tmp_path / "nowhere")))
    assert isinstance(missing, AnalysisException) and error_condition(missing) == "PATH_NOT_FOUND"


def test_a_second_stage_of_a_submission_is_told_by_its_condition_and_keeps_the_first(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    first = stage_candidate(spark, plan, "s1")

    again = stage_candidate(spark, plan, "s1")

    assert (again["status"], again["version"], again["row_count"]) == ("already_staged", 0, 1)
    assert version_of(spark, first["candidate"]) == 0


def _transaction(spark, path: str):
    """A Delta transaction opened on ``path`` through the JVM: the one way to hold it open while
    another writer commits, so the conflict is certain, not a race."""
    jvm = spark._jvm
    return jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path).startTransaction()


def _commit(spark, transaction) -> int:
    jvm = spark._jvm
    nothing = jvm.scala.jdk.javaapi.CollectionConverters.asScala(jvm.java.util.ArrayList()).toSeq()
    manual_update = getattr(getattr(jvm, "org.apache.spark.sql.delta.DeltaOperations$ManualUpdate$"), "MODULE$")
    return int(transaction.commit(nothing, manual_update))


def test_a_real_delta_commit_conflict_is_retried_by_its_type(spark, tmp_path):
    path = str(tmp_path / "t")
    spark.range(2).write.format("delta").save(path)
    lost: list[BaseException] = []

    def attempt(number: int) -> int:
        transaction = _transaction(spark, path)
        transaction.txnVersion("twin")  # reads the idempotent-write record of the app id "twin"
        if number == 1:  # a twin run commits that record first
            twin = spark.newSession()
            twin.conf.set("spark.databricks.delta.write.txnAppId", "twin")
            twin.conf.set("spark.databricks.delta.write.txnVersion", "1")
            twin.range(1).write.format("delta").mode("append").save(path)
        try:
            return _commit(spark, transaction)
        except CONFLICTS as exc:
            lost.append(exc)
            raise

    assert retry_conflicts(attempt, "a test commit") == 2  # version 1 is the twin's

    [conflict] = lost
    assert isinstance(conflict, delta_errors.ConcurrentTransactionException)
    assert spark_errors(conflict) == []  # PySpark's Delta conversion keeps no condition: the type is it
    assert spark.read.format("delta").load(path).count() == 3


def test_a_failure_that_is_not_a_conflict_is_not_retried(spark):
    name = _name()
    spark.sql(f"CREATE TABLE {name} (a INT) USING DELTA")
    calls = []

    def attempt(number: int) -> None:
        calls.append(number)
        spark.sql(f"CREATE TABLE {name} (a INT) USING DELTA")

    exc = _failure(lambda: retry_conflicts(attempt, "a test"))

    assert calls == [1] and has_condition(exc, TABLE_EXISTS)
