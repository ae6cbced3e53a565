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
