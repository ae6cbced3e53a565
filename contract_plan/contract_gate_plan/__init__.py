"""The plan, shared by both sides: import-light (stdlib and sqlglot only).

The Airflow side compiles a contract into a plan document and the Spark side executes it; what
both must agree on lives here once: the plan document (version, fingerprint, check), its typed
form, SQL text and the allow-list of contract SQL, the Spark type grammar, table DDL and
compatibility, table addresses and ownership, the gate's restricted storage, and the commit
tags both sides read. Importing any module of this package loads no pyspark, delta or Airflow.
"""
