"""A catalog decision table's MERGE that loses to a concurrent write is retried; any other error
is not. The warehouse is local Spark SQL; the lost race is injected as Databricks reports it
(its ``DELTA_CONCURRENT_*`` error class in the message)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from _catalog_sql import LocalSparkSql

from contract_gate.decisions.record import Decision
from contract_gate.decisions.unity_catalog import UnityCatalogDecisionStore


class LosesMerges(LocalSparkSql):
    """Answers the first ``merges`` MERGE statements with ``error``, then runs every statement."""

    def __init__(self, spark, merges: int, error: str):
        super().__init__(spark)
        self.merges, self.error = merges, error

    def execute(self, sql):
        if sql.startswith("MERGE") and self.merges:
            self.merges -= 1
            self.statements.append(sql)
            raise RuntimeError(self.error)
        super().execute(sql)


def _decision() -> Decision:
    return Decision(submission_id="s1", contract_id="orders", contract_version="1.0.0", outcome="published",
                    decided_at=datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def schema(spark, tmp_path):
    name = f"cg_retry_{abs(hash(str(tmp_path))) % 10**8}"
    spark.sql(f"CREATE DATABASE spark_catalog.{name} LOCATION '{tmp_path}/warehouse'")
    yield f"spark_catalog.{name}"
    spark.sql(f"DROP DATABASE spark_catalog.{name} CASCADE")


def test_a_merge_that_lost_to_a_concurrent_write_is_retried_and_recorded_once(spark, schema):
    runner = LosesMerges(spark, merges=2, error="[DELTA_CONCURRENT_APPEND] Files were added by a concurrent update")
    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)

    store.record(_decision())

    assert sum(s.startswith("MERGE") for s in runner.statements) == 3
    assert [d.outcome for d in store.records(submission_id="s1")] == ["published"]


def test_any_other_error_of_a_merge_is_raised_at_once_and_nothing_is_recorded(spark, schema):
    runner = LosesMerges(spark, merges=1, error="[INSUFFICIENT_PERMISSIONS] User does not have MODIFY")
    store = UnityCatalogDecisionStore(f"{schema}.decisions", runner)

    with pytest.raises(RuntimeError, match="INSUFFICIENT_PERMISSIONS"):
        store.record(_decision())

    assert sum(s.startswith("MERGE") for s in runner.statements) == 1
    assert store.records(submission_id="s1") == []
