"""Building the gate's Airflow DAGs: the per-contract DAG files (``stub_files``), the DAGs of one
contract (``contract_dags``: gate, retention, freshness), the gate as a task group
(``task_group``), its schedule (``gate_schedule``) and its ``doc_md`` (``dag_doc``).

DAG files import :mod:`contract_gate.dag_factory` and DAG authors :mod:`contract_gate.task_group`,
the provider's public names for these modules.
"""
