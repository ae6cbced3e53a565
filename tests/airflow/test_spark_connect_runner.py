"""The ``spark_connect`` runner's Airflow side, without a server: the connection it reads and what
importing it costs. (Gate jobs over a real Connect server: tests/spark_connect/.)"""

from __future__ import annotations

import json
import subprocess
import sys

from contract_gate.runners import get_runner
from contract_gate.runners.spark_connect import DEFAULT_CONN_ID, SparkConnectRunner


def test_the_url_comes_from_the_spark_connect_connection_with_token_and_ssl(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_GATE_CONNECT", json.dumps({
        "conn_type": "spark_connect", "host": "spark.example", "port": 15003, "login": "gate",
        "password": "s3cr3t", "extra": {"use_ssl": True}}))
    runner = get_runner("spark_connect", conn_id="gate_connect")
    assert isinstance(runner, SparkConnectRunner)
    assert runner.connection_url() == "sc://spark.example:15003/;user_id=gate;token=s3cr3t;use_ssl=True"


def test_the_default_connection_is_spark_connect_default(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", json.dumps(
        {"conn_type": "spark_connect", "host": "127.0.0.1", "port": 15002}))
    runner = get_runner("spark_connect")
    assert runner.conn_id == DEFAULT_CONN_ID == "spark_connect_default"
    assert runner.connection_url() == "sc://127.0.0.1:15002/"
    assert SparkConnectRunner(url="sc://elsewhere:1").connection_url() == "sc://elsewhere:1"


def test_importing_the_runner_imports_no_pyspark():
    code = "import sys, contract_gate.runners.spark_connect; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
