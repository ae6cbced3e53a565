"""``contract-gate audit`` on the quick start's lakehouse: the README's demo (``scripts/demo.py``,
a good and a bad batch of every example contract gated through its generated DAG over one local
Spark Connect server) leaves a decision log that agrees with its tables: the README's plain
``contract-gate audit`` exits 0 and says clean, and so does an audit that leaves no commit out
(``--settle 0``), with a final decision and a tagged commit for every gate the demo ran.

Both run as processes of their own, as a user runs them: the demo reads Airflow's settings once
per process and makes its process a Spark Connect client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

REPO = Path(__file__).resolve().parents[2]
CONTRACT_GATE = Path(sys.executable).with_name("contract-gate")


@pytest.mark.slow  # a Spark Connect server and six dag.test() gates
def test_audit_of_the_quick_starts_lakehouse_is_clean(tmp_path):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "CONTRACT_GATE_")) and name not in CONNECT_CLIENT_ENV}
    env.update(CONTRACT_GATE_HOME=str(tmp_path), AIRFLOW_HOME=str(tmp_path / ".airflow"))
    demo = subprocess.run([sys.executable, str(REPO / "scripts" / "demo.py")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1500)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]

    readme = subprocess.run([str(CONTRACT_GATE), "audit"], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert readme.returncode == 0, readme.stdout + readme.stderr
    assert readme.stdout.count(": clean") == 3, readme.stdout  # the three example contracts, one object each

    every_commit = subprocess.run([str(CONTRACT_GATE), "audit", "--settle", "0", "--json"], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=300)
    assert every_commit.returncode == 0, every_commit.stdout + every_commit.stderr
    audited = json.loads(every_commit.stdout)
    assert audited["clean"] is True
    assert sorted(o["contract_id"] for o in audited["objects"]) == ["meter_readings", "orders", "regional_daily_cases"]
    for audited_object in audited["objects"]:
        assert audited_object["findings"] == []
        assert audited_object["decisions"] == 2  # the good and the bad batch, each decided once
        assert audited_object["commits"] >= 2  # each wrote its target or its quarantine, tagged
