"""Freshness of accepted data: how old is the newest business date a consumer can read?

A gate that rejects a bad batch keeps the target correct but can leave it old. This package
answers "is the accepted data within the contract's SLA?" without starting a JVM (the Delta
transaction log's per-file statistics, the decision table, or the Databricks SQL warehouse),
writes a status consumers can read, and alerts once per stale episode through Airflow notifiers.
Nothing here imports pyspark.
"""
