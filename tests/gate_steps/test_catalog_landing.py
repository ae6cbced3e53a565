"""A landing given as a catalog table: its Delta version asked with ``DESCRIBE HISTORY``, run through
local Spark SQL (the dialect Databricks SQL extends) against a real Delta table in the session's
catalog; and a contract whose landing is a Delta catalog table, which may start on landing.
No Databricks workspace.
"""

from __future__ import annotations

import pytest
import yaml
from _catalog_sql import LocalSparkSql

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.landing_tables import catalog_version
from contract_gate.submission import batch_digest, delta_digest

REPO_CONTRACT = "contracts/regional_daily_cases.yaml"


@pytest.fixture
def schema(spark, tmp_path):
    name = f"cg_landing_{abs(hash(str(tmp_path))) % 10**8}"
    spark.sql(f"CREATE DATABASE spark_catalog.{name} LOCATION '{tmp_path}/warehouse'")
    yield f"spark_catalog.{name}"
    spark.sql(f"DROP DATABASE spark_catalog.{name} CASCADE")


def test_a_catalog_landing_is_known_by_its_newest_delta_version(spark, schema):
    runner = LocalSparkSql(spark)
    landing = {"kind": "table", "name": f"{schema}.cases", "format": "delta"}
    assert catalog_version(landing, runner) is None  # nothing has landed
    spark.sql(f"CREATE TABLE {schema}.cases (region STRING, cases BIGINT) USING DELTA")
    assert catalog_version(landing, runner) == 0
    spark.sql(f"INSERT INTO {schema}.cases VALUES ('R1', 3)")
    spark.sql(f"INSERT INTO {schema}.cases VALUES ('R2', 4)")
    assert catalog_version(landing, runner) == 2
    database = schema.split(".")[1]
    assert runner.statements[-1] == f"DESCRIBE HISTORY `spark_catalog`.`{database}`.`cases` LIMIT 1"
    assert delta_digest(2) != delta_digest(1)  # a new version is a new batch


def test_a_catalog_landing_that_is_not_delta_needs_the_submission_id():
    with pytest.raises(ValueError, match="is a catalog table that is not Delta: give the submission id"):
        batch_digest({"kind": "table", "name": "main.drops.cases", "format": "parquet"})


def catalog_contract(tmp_path, landing: dict, schedule) -> str:
    document = yaml.safe_load(open(REPO_CONTRACT, encoding="utf-8"))
    document["servers"] = [{"server": "prod", "type": "databricks", "catalog": "main", "schema": "health"}]
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["landing"] = landing
    gate["schedule"] = schedule
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return str(path)


def test_a_delta_catalog_landing_may_start_the_gate_on_landing_and_names_its_connection(tmp_path):
    plan = compile_plan(catalog_contract(tmp_path, {"table": "drops_cases", "connection": "databricks_drops"},
                                         "@landing"))
    assert plan.document["tables"]["landing"] == {"kind": "table", "name": "main.health.drops_cases", "format": "delta",
                                         "connection": "databricks_drops"}
    from contract_gate.dags.gate_schedule import landing_asset

    asset = landing_asset(plan)
    assert asset.uri == "table://main.health.drops_cases/"  # as Airflow normalises a URI
    assert asset.watchers[0].trigger.watch.landing["connection"] == "databricks_drops"
    with pytest.raises(ContractError, match="onLanding needs a landing given by path or a Delta table"):
        compile_plan(catalog_contract(tmp_path, {"table": "drops_cases", "format": "parquet"}, "@landing"))
