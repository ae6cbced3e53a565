"""One Airflow DAG per data contract: every ``*.yaml`` in the contracts folder becomes a gate DAG.

Each contract gets a tiny generated DAG file in ``contract_gates_generated/`` next to this one,
so a malformed contract is an import error of its own file only (see contract_gate.dag_factory).
Settings: CONTRACT_GATE_CONTRACTS_DIR, CONTRACT_GATE_ENV, CONTRACT_GATE_HOME.
"""

from contract_gate.dag_factory import sync_dag_files

sync_dag_files(__file__)
