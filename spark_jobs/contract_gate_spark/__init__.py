"""The Spark side: executes a plan (``contract_gate_plan``) on Spark and Delta Lake.

Subpackages by role: ``validation`` (judge a candidate, write the report), ``steps`` (the
Delta writes: stage, publish, quarantine, retention), ``runtime`` (sessions and the local
runner's start-up aids) and ``commands`` (the one entry point, ``commands/gate_job.py``).
Depends on pyspark, delta-spark, ``contract_gate_plan`` (stdlib and sqlglot) and nothing else:
never on Airflow or ``contract_gate``.
"""
