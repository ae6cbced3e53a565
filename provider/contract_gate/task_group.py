"""The name that DAG authors import the gate's task group from (README, docs/airflow.md); it lives
in :mod:`contract_gate.dags.task_group`."""

from contract_gate.dags.task_group import contract_gate_task_group, target_asset

__all__ = ["contract_gate_task_group", "target_asset"]
