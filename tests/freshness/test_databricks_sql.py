"""Freshness of a Unity Catalog target through the statements a SQL warehouse runs.

The warehouse is local Spark SQL + Delta, the dialect a Databricks SQL warehouse speaks, so the
exact statements the check sends run on a real engine against a real catalog table
(``spark_catalog.<schema>.<table>`` stands in for ``catalog.schema.table``). The rows come back
typed as the Statement Execution API's result schema types them (``hooks.databricks.typed``).
"""

from __future__ import annotations

import datetime as dt

import yaml
from _freshness_helpers import publish_cases, write_contract

from contract_gate.contract.compiler import compile_plan
from contract_gate.freshness.databricks_sql import history_sql, max_value_sql
from contract_gate.freshness.latest import latest_accepted

UTC = dt.timezone.utc


class LocalWarehouse:
    """What ``decisions.unity_catalog.SqlRunner`` does on a warehouse, on the local Spark session."""

    def __init__(self, spark):
        self.spark, self.statements = spark, []

    def query(self, sql):
        self.statements.append(sql)
        return [row.asDict() for row in self.spark.sql(sql).collect()]


def catalog_contract(folder, base: str, schema: str):
    """The example contract with its prod server on a catalog local Spark has."""
    path = write_contract(folder, base=base)
    document = yaml.safe_load(path.read_text())
    document["servers"] = [{"server": "prod", "type": "databricks", "environment": "prod",
                            "catalog": "spark_catalog", "schema": schema}]
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return compile_plan(path, env="prod")


def test_date_target(spark, tmp_path):
    plan = catalog_contract(tmp_path, "regional_daily_cases", "surveillance")
    table = plan.tables.target.name
    assert table == "spark_catalog.surveillance.regional_daily_cases"
    spark.sql("CREATE SCHEMA IF NOT EXISTS surveillance")
    spark.sql("DROP TABLE IF EXISTS surveillance.regional_daily_cases")
    spark.sql("CREATE TABLE surveillance.regional_daily_cases (region_code string, report_date date, "
              "reporting_org string, case_count bigint, status string) USING DELTA")
    location = spark.sql("DESCRIBE DETAIL surveillance.regional_daily_cases").first()["location"]
    publish_cases(spark, location, "sub-1", [dt.date(2024, 3, 1), dt.date(2024, 3, 3)])
    spark.sql("ALTER TABLE surveillance.regional_daily_cases SET TBLPROPERTIES ('delta.appendOnly' = 'false')")
    # ^ a newer commit without a submission id

    hook = LocalWarehouse(spark)
    latest = latest_accepted(plan, hook)
    assert (latest.value, latest.submission_id, latest.target_version, latest.source) == (
        dt.date(2024, 3, 3), "sub-1", 2, "databricks_sql")
    assert hook.statements == [
        "SELECT CAST(max(`report_date`) AS STRING) AS latest FROM `spark_catalog`.`surveillance`.`regional_daily_cases`",
        "DESCRIBE HISTORY `spark_catalog`.`surveillance`.`regional_daily_cases` LIMIT 100",
    ]


def test_timestamp_target_is_read_as_an_instant(spark, tmp_path):
    plan = catalog_contract(tmp_path, "orders", "sales")
    spark.sql("CREATE SCHEMA IF NOT EXISTS sales")
    spark.sql("DROP TABLE IF EXISTS sales.orders")
    spark.sql("CREATE TABLE sales.orders (order_id string, customer_id string, order_total double, "
              "currency string, order_timestamp timestamp) USING DELTA")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")  # the warehouse's zone must not matter
    try:
        spark.sql("INSERT INTO sales.orders VALUES ('o1', 'c1', 10.0, 'EUR', TIMESTAMP'2024-03-01 09:00:00.123456')")
        hook = LocalWarehouse(spark)
        latest = latest_accepted(plan, hook)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert latest.value == dt.datetime(2024, 3, 1, 0, 0, 0, 123456, tzinfo=UTC)
    assert latest.submission_id is None and latest.target_version == 1
    assert hook.statements[0] == max_value_sql("spark_catalog.sales.orders", "order_timestamp", "timestamp")
    assert "unix_micros(max(`order_timestamp`))" in hook.statements[0]


def test_identifiers_are_quoted():
    assert max_value_sql("c.s.t`x", "we`ird", "date") == (
        "SELECT CAST(max(`we``ird`) AS STRING) AS latest FROM `c`.`s`.`t``x`")
    assert history_sql("c.s.t") == "DESCRIBE HISTORY `c`.`s`.`t` LIMIT 100"
