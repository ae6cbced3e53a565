"""Real Airflow (SQLite, ``dag.test()``), real local Spark, real Delta: one private world per session.

Airflow reads ``AIRFLOW_HOME`` and its database URL once, when it is first imported, so those
are set here at import time, before any test module imports Airflow. ``CONTRACT_GATE_HOME`` is
only set while a gate DAG is parsed or run (``_airflow_gate.gate_home``): other suites resolve
relative tables against their own working directory.
"""

from __future__ import annotations

import os
import shutil

import pytest
from _airflow_gate import AIRFLOW_ENV, CONTRACTS, DAGS, HOME, REPO, ROOT, WORLD_DIR_ENV, Gate, gate_home
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

os.environ.update(AIRFLOW_ENV)


@pytest.fixture(scope="session")
def gate() -> Gate:
    """A migrated Airflow DB, the example contracts, and their generated DAG files."""
    from airflow.utils import db

    db.upgradedb()
    shutil.copytree(REPO / "contracts", CONTRACTS)
    DAGS.mkdir(parents=True)
    shutil.copy(REPO / "dags" / "contract_gates.py", DAGS / "contract_gates.py")
    from contract_gate.dag_factory import sync_dag_files

    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)
    HOME.mkdir(parents=True, exist_ok=True)
    return Gate()


@pytest.fixture(scope="module")
def gates_over_connect(spark_connect_server):
    """The module's gate runs over the worker's Spark Connect server (``[contract_gate]
    execution_mode`` = ``spark_connect``), for modules that test what a gate decides, not where its
    Spark runs: a warm server takes seconds a job, a new local JVM tens of seconds. The execution
    modes themselves have their own tests (the local runner: the quick start, the README tour,
    ``test_time_budget_gates``, ``test_class_archive``, ``gate_steps/test_killed_local_task``)."""
    saved = {name: os.environ.pop(name, None) for name in CONNECT_CLIENT_ENV}  # a Connect client's marks
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRFLOW__CONTRACT_GATE__EXECUTION_MODE", "spark_connect")
        patch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", spark_connect_server.connection())
        try:
            yield spark_connect_server
        finally:  # the next module of this worker may start a classic driver
            for name, value in saved.items():
                os.environ.pop(name, None)
                if value is not None:
                    os.environ[name] = value


@pytest.fixture(scope="session", autouse=True)
def _world_removed():
    """The session's world folder (made when ``_airflow_gate`` is imported) goes at the end, unless
    a calling test placed it in a folder of its own (``WORLD_DIR_ENV``) to look at it after."""
    yield
    if not os.environ.get(WORLD_DIR_ENV):
        shutil.rmtree(ROOT, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_server():
    """moto's standalone S3 server on 127.0.0.1 (``_s3_server``), for the session."""
    from _s3_server import S3Server

    server = S3Server(ROOT / "s3").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cli_env(gate):
    """The CLI points Airflow and the gate at folders of its own through the process environment
    (``run_cmd.prepare_environment``): every variable is put back after the test."""
    saved = dict(os.environ)
    try:
        with gate_home():
            yield gate
    finally:
        os.environ.clear()
        os.environ.update(saved)
