"""The Unity Catalog decision store's SQL: checked as text, then run through local Spark SQL
(the dialect Databricks SQL extends) against a local Delta table. No Databricks workspace."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from _catalog_sql import LocalSparkSql

from contract_gate.decisions.record import Decision, ObjectScope
from contract_gate.decisions.store import FAILED_MATCH, FINAL_MATCH, SUPERSEDE
from contract_gate.decisions.unity_catalog import SqlRunner, UnityCatalogDecisionStore, UnityCatalogHistory

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def _decision(submission_id="s1", outcome="published", **extra) -> Decision:
    return Decision(submission_id=submission_id, contract_id="orders", contract_version="1.0.0",
                    outcome=outcome, decided_at=T0, **extra)


@pytest.fixture
def schema(spark, tmp_path):
    name = f"cg_uc_{abs(hash(str(tmp_path))) % 10**8}"
    spark.sql(f"CREATE DATABASE spark_catalog.{name} LOCATION '{tmp_path}/warehouse'")
    yield f"spark_catalog.{name}"
    spark.sql(f"DROP DATABASE spark_catalog.{name} CASCADE")


def test_merge_text_quotes_every_value_and_keeps_types():
    store = UnityCatalogDecisionStore("main.gate.decisions", runner=None)
    decision = _decision("it's; DROP TABLE x", rule_failures={"a'b": 2}, failed_rules=["a'b"])
    sql = store.merge_sql(decision, store.match(FINAL_MATCH, decision), SUPERSEDE)

    assert sql.startswith("MERGE INTO `main`.`gate`.`decisions` AS t\nUSING (SELECT")
    assert "'it\\'s; DROP TABLE x' AS `submission_id`" in sql
    assert "CAST(MAP('a\\'b', CAST(2 AS BIGINT)) AS MAP<STRING,BIGINT>) AS `rule_failures`" in sql
    assert "CAST(NULL AS BIGINT) AS `target_version_after`" in sql
    assert f"TIMESTAMP_MICROS({int(T0.timestamp() * 1_000_000)}) AS `decided_at`" in sql
    assert ("ON t.contract_id = 'orders' AND t.submission_id = 'it\\'s; DROP TABLE x' AND t.final\n"
            f"WHEN MATCHED AND {SUPERSEDE} THEN UPDATE SET *\nWHEN NOT MATCHED THEN INSERT *") in sql


def test_the_catalog_table_is_clustered_by_contract_and_each_merge_names_its_submission():
    store = UnityCatalogDecisionStore("main.gate.decisions", runner=None, properties={"team.owner": "ops"})
    failed = _decision(outcome="failed", run_id="r1")

    create = store.create_sql()
    assert "USING DELTA\nCLUSTER BY (`contract_id`)\nTBLPROPERTIES (" in create
    for key, value in (("delta.enableDeletionVectors", "true"), ("delta.logRetentionDuration", "interval 2 days"),
                       ("team.owner", "ops"), ("contract_gate.role", "decisions")):
        assert f"'{key}' = '{value}'" in create
    assert store.match(FAILED_MATCH, failed) == (
        "t.contract_id = 'orders' AND t.submission_id = 's1' AND (t.final OR t.run_id IS NOT DISTINCT FROM s.run_id)")
    assert store.upkeep_sql() == "OPTIMIZE `main`.`gate`.`decisions`"


def test_the_runner_sends_each_statement_to_the_connections_warehouse():
    class Hook:
        statements: list = []

        def settings(self):
            return {"warehouse_id": "wh-1"}

        def run_statement(self, statement, warehouse_id):
            self.statements.append((statement, warehouse_id))
            return [{"version": 3, "userMetadata": "s1"}]

    hook = Hook()
    assert SqlRunner(hook=hook).query("DESCRIBE HISTORY t") == [{"version": 3, "userMetadata": "s1"}]
    assert hook.statements == [("DESCRIBE HISTORY t", "wh-1")]


@pytest.mark.slow  # a long run, about 10 s
def test_the_statements_run_on_spark_and_keep_one_final_record(spark, schema):
    runner = LocalSparkSql(spark)
    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)

    store.record(_decision(outcome="failed", run_id="r1"))
    store.record(_decision(outcome="failed", run_id="r1"))
    store.record(_decision(source="recovery"))
    stored = store.record(_decision(outcome="split", rule_failures={"x": 2}, failed_rules=["x"],
                                    latest_business_date="2024-03-01"))
    store.record(_decision())

    rows = store.records(submission_id="s1")
    assert sorted((d.outcome, d.source) for d in rows) == [("failed", "gate"), ("split", "gate")]
    assert stored == store.final("s1") == _decision(outcome="split", rule_failures={"x": 2},
                                                   failed_rules=["x"], latest_business_date="2024-03-01")
    assert runner.statements[0].startswith("CREATE TABLE IF NOT EXISTS `spark_catalog`.")
    assert sum(s.startswith("CREATE") for s in runner.statements) == 1
    merges = [s for s in runner.statements if s.startswith("MERGE")]
    assert merges and all("ON t.contract_id = 'orders' AND t.submission_id = 's1' AND" in s for s in merges)
    detail = spark.sql(f"DESCRIBE DETAIL {schema}.decisions").first()
    assert list(detail["clusteringColumns"]) == ["contract_id"]
    assert detail["properties"]["delta.logRetentionDuration"] == "interval 2 days"


@pytest.mark.slow  # a long run, about 11 s
def test_the_upkeep_statement_runs_on_spark_and_keeps_every_record(spark, schema):
    runner = LocalSparkSql(spark)
    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)
    for n in range(4):
        store.record(_decision(f"s{n}"))
    store.record(Decision(submission_id="s0", contract_id="other", contract_version="1", outcome="quarantined",
                          decided_at=T0))

    done = store.upkeep("orders")

    assert done["statements"] == [f"OPTIMIZE {store.table}"] and runner.statements[-1] == f"OPTIMIZE {store.table}"
    [operation] = [row["operation"] for row in spark.sql(f"DESCRIBE HISTORY {schema}.decisions LIMIT 1").collect()]
    assert operation == "OPTIMIZE"
    assert sorted(d.submission_id for d in store.records(contract_id="orders")) == ["s0", "s1", "s2", "s3"]
    assert [d.outcome for d in store.records(submission_id="s0", contract_id="other")] == ["quarantined"]


def test_catalog_history_finds_tagged_commits(spark, schema):
    table = f"{schema}.target"
    spark.sql(f"CREATE TABLE {table} (k STRING) USING DELTA")
    tagged = spark.newSession()
    tagged.conf.set("spark.databricks.delta.commitInfo.userMetadata", "s1")
    tagged.createDataFrame([("a",), ("b",)], "k string").write.format("delta").mode("append").saveAsTable(table)

    history = UnityCatalogHistory(LocalSparkSql(spark))
    [commit] = history.tagged_commits({"kind": "table", "name": table})

    assert (commit.version, commit.submission_id, commit.rows_written()) == (1, "s1", 2)
    assert history.max_value({"kind": "table", "name": table}, 1, "k") == "b"
    assert history.tagged_commits({"kind": "table", "name": f"{schema}.missing"}) == []


def test_a_catalog_table_that_is_not_the_decision_table_is_not_written(spark, schema):
    """The store checks the table's ownership properties once, before its first record."""
    from contract_gate_plan.ownership import OwnershipError

    table = f"{schema}.decisions"
    spark.sql(f"CREATE TABLE {table} (submission_id STRING) USING DELTA "
              "TBLPROPERTIES ('contract_gate.contract' = 'orders', 'contract_gate.role' = 'target')")
    runner = LocalSparkSql(spark)

    with pytest.raises(OwnershipError, match="belongs to contract 'orders' as its target"):
        UnityCatalogDecisionStore(table, runner).record(_decision())
    assert not any(statement.startswith("MERGE") for statement in runner.statements)
    assert spark.table(table).count() == 0


def test_a_catalog_table_of_the_earlier_layout_keeps_working_and_is_clustered_by_one_statement(spark, schema):
    runner = LocalSparkSql(spark)
    old = UnityCatalogDecisionStore(f"{schema}.decisions", runner)
    spark.sql(old.create_sql().split("\nCLUSTER BY")[0]
              + " TBLPROPERTIES ('contract_gate.role' = 'decisions')")  # as created before the layout
    old.record(_decision("s1"))

    spark.sql(f"ALTER TABLE {old.table} CLUSTER BY (contract_id)")  # the migration step of docs/operations.md

    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)
    store.record(_decision("s2"))
    assert list(spark.sql(f"DESCRIBE DETAIL {old.table}").first()["clusteringColumns"]) == ["contract_id"]
    assert sorted(d.submission_id for d in store.records(contract_id="orders")) == ["s1", "s2"]


def test_a_catalog_table_from_before_the_object_column_gets_it_once(spark, schema):
    runner = LocalSparkSql(spark)
    old = UnityCatalogDecisionStore(f"{schema}.decisions", runner)
    spark.sql(old.create_sql().replace(",\n  `object` STRING", ""))  # as created before records named their object
    spark.sql(old.merge_sql(_decision("s1"), old.match(FINAL_MATCH, _decision("s1")), SUPERSEDE)
              .replace(",\n    CAST(NULL AS STRING) AS `object`", ""))
    orders = ObjectScope("orders", sole=True)

    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)
    assert store.record(_decision("s1", "quarantined", object="orders"), orders).outcome == "published"
    store.record(_decision("s2", object="orders"), orders)
    UnityCatalogDecisionStore(f"{schema}.decisions", runner).record(_decision("s3", object="orders"), orders)

    assert sum(s.startswith("ALTER TABLE") for s in runner.statements) == 1
    assert sorted((d.submission_id, d.object) for d in store.records(contract_id="orders", scope=orders)) == [
        ("s1", None), ("s2", "orders"), ("s3", "orders")]
    assert sorted(d.submission_id for d in store.records(contract_id="orders", scope=ObjectScope("orders", sole=False))) \
        == ["s2", "s3"]
