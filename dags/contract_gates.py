"""Airflow DAGs of the data contracts: every ``*.yaml`` in the contracts folder has a gate DAG file
in ``contract_gates_generated/`` next to this one, written by ``contract-gate dags sync`` at deploy
time (and committed), never while Airflow parses (see contract_gate.dag_factory).

This file holds no DAG: it only fails, as an import error of its own naming the files, when a
contract has no generated DAG file yet, so a forgotten sync is visible in the UI.
Settings: CONTRACT_GATE_CONTRACTS_DIR, CONTRACT_GATE_ENV, CONTRACT_GATE_HOME.
"""

from contract_gate.dag_factory import refuse_unsynced_contracts

refuse_unsynced_contracts(__file__)
