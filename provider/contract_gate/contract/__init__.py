"""The contract side: load and check an ODCS file, compile it into a ValidationPlan, derive table DDL.

Nothing in this package imports Airflow or pyspark, so ``lint``, ``plan`` and the in-process
API work anywhere Python runs.
"""
