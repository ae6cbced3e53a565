"""The name that DAG files import (``dags/contract_gates.py`` and every generated stub, committed
in users' DAG folders); the DAG building itself lives in :mod:`contract_gate.dags`."""

from contract_gate.dags.contract_dags import contract_dag, contract_dags, freshness_dag, retention_dag
from contract_gate.dags.stub_files import STUB_FOLDER, refuse_unsynced_contracts, sync_dag_files, unsynced_dag_files

__all__ = ["STUB_FOLDER", "contract_dag", "contract_dags", "freshness_dag", "refuse_unsynced_contracts",
           "retention_dag", "sync_dag_files", "unsynced_dag_files"]
