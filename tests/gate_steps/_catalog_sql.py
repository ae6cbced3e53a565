"""A ``SqlRunner`` stand-in that runs Databricks SQL statements on the local Spark session (the
dialect Databricks SQL extends), for the Unity Catalog stores and histories. No workspace."""

from __future__ import annotations


class LocalSparkSql:
    def __init__(self, spark):
        self.spark = spark
        self.statements: list[str] = []

    def execute(self, sql):
        self.statements.append(sql)
        self.spark.sql(sql).collect()

    def query(self, sql):
        self.statements.append(sql)
        return [row.asDict() for row in self.spark.sql(sql).collect()]
