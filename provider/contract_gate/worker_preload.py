"""What LocalExecutor's workers are forked with, so that every gate task forked from one starts ready.

``contract-gate airflow up`` and the compose stack name this module in ``[scheduler]
mp_forkserver_preload``, with ``mp_start_method = forkserver`` (Airflow 3.3 and later; earlier
releases ignore both). The scheduler's forkserver imports it once; every worker is forked from the
forkserver, and every task process from a worker (Airflow's supervisor forks, it does not exec).
So a task finds loaded what it would otherwise load each time it starts: the task runner and the
DAG bag, Airflow's plugins and their listeners (about 1 s of CPU), the gate's DAG code, and with
``[contract_gate] execution_mode = spark_connect`` the Connect client and the gate job's steps
(pandas, pyarrow, grpc: about 2 s). No gRPC channel is opened here, so a task's fork may use gRPC
(``contract_gate.runners.connect_fence``).

Importing it never fails: a task loads whatever is missing itself.
"""

from __future__ import annotations

import contextlib
import importlib

from airflow.sdk.execution_time import task_runner

from contract_gate import config

TASK_MODULES = ("airflow.dag_processing.dagbag", "contract_gate.dags.contract_dags")
CONNECT_MODULES = ("pyspark.sql.connect.session", "contract_gate.runners.spark_connect",
                   "contract_gate_spark.commands.gate_job")


def preload() -> None:
    for name in TASK_MODULES:
        importlib.import_module(name)
    with contextlib.suppress(Exception):  # a plugin that fails to load fails its tasks, not the executor
        # Airflow's plugins and their listeners, as the task runner loads them on start (its own
        # name for the function: its module moved between Airflow releases); cached per process
        task_runner.get_listener_manager()
    if config.get("execution_mode") == "spark_connect":
        for name in CONNECT_MODULES:
            importlib.import_module(name)


# Anything that fails here (the Connect client is an extra) is loaded, or fails, in the task that
# uses it: an error here would stop the forkserver, and with it every task of the scheduler.
with contextlib.suppress(Exception):
    preload()
