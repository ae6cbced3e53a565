"""The gate's Airflow tasks, one operator per step: submission, stage and validate, branch,
publish, quarantine, split, record the decision, and retention (``contract_gate.task_group``
wires them into one gate; the runners decide where their Spark runs)."""
