"""The founding DQX orders contract, with its URN id (``urn:datacontract:checkout:orders``), gates
its ten-row batch 6 valid / 4 invalid, and its v2 (one more currency allowed) 7 / 3: on local
Spark through the gate's steps (stage, validate, publish the valid rows, quarantine the invalid
ones), and over the suite's Spark Connect server (a client in a child process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from deltalake import DeltaTable

from _gate_plans import ROOT, write_json
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate_plan.document import read_document

CONTRACT = ROOT / "tests" / "contracts_real" / "id_urn_dqx_orders.yaml"
URN = "urn:datacontract:checkout:orders"
T = "2024-03-01T12:00:00Z"
BATCH = [
    {"order_id": "O1", "customer_id": "C1", "order_total": 10.0, "currency": "USD", "order_timestamp": T},
    {"order_id": "O2", "customer_id": "C2", "order_total": 20.5, "currency": "EUR", "order_timestamp": T},
    {"order_id": "O3", "customer_id": "C3", "order_total": 99.99, "currency": "GBP", "order_timestamp": T},
    {"order_id": "O4", "customer_id": "C4", "order_total": 0.0, "currency": "USD", "order_timestamp": T},  # boundary
    {"order_id": "O5", "customer_id": "C5", "order_total": -0.01, "currency": "USD", "order_timestamp": T},
    {"order_id": "O6", "customer_id": "C6", "order_total": 12.0, "currency": "JPY", "order_timestamp": T},  # v2 allows it
    {"order_id": "O7", "customer_id": None, "order_total": 15.0, "currency": "EUR", "order_timestamp": T},
    {"order_id": "O8", "customer_id": "C8", "order_total": 15.0, "currency": "EUR", "order_timestamp": T},
    {"order_id": "O9", "customer_id": "C9", "order_total": 7.25, "currency": "EUR", "order_timestamp": T},
    {"order_id": "O10", "customer_id": None, "order_total": -5.0, "currency": "CHF", "order_timestamp": T},
]


def contract_text(v2: bool) -> str:
    text = CONTRACT.read_text(encoding="utf-8")
    if v2:
        allowed = """allowed: ["'USD'", "'EUR'", "'GBP'"]"""
        assert allowed in text
        text = text.replace(allowed, allowed[:-1] + """, "'JPY'"]""").replace("version: 1.0.0", "version: 2.0.0")
    return text


def urn_plan(root: Path, v2: bool = False) -> dict:
    plan = compile_plan(load_contract_text(contract_text(v2), str(CONTRACT))).document
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        address["path"] = f"{root}/{address['path']}"
    return read_document(plan)


@pytest.mark.parametrize(("v2", "valid", "invalid"), [(False, 6, 4), (True, 7, 3)])
def test_the_urn_contract_gates_its_batch_on_local_spark(spark, tmp_path, v2, valid, invalid):
    from contract_gate_spark.steps.publish import publish
    from contract_gate_spark.steps.quarantine import quarantine
    from contract_gate_spark.steps.stage import stage_candidate
    from contract_gate_spark.validation.candidate import read_candidate
    from contract_gate_spark.validation.engine import run_validation

    plan = urn_plan(tmp_path, v2)
    assert plan["contract"]["id"] == URN and plan["names"]["dag_id"] != URN
    landing = write_json(tmp_path / "landing", BATCH)

    staged = stage_candidate(spark, plan, "s-urn", str(landing))
    report = run_validation(spark, plan, read_candidate(spark, staged["candidate"]["path"]), submission_id="s-urn")
    published = publish(spark, plan, "s-urn", staged["candidate"], staged["version"], "valid", report)
    quarantined = quarantine(spark, plan, "s-urn", staged["candidate"], staged["version"], report, "invalid")

    assert report["contract"]["id"] == URN and report["rows"] == {"valid": valid, "invalid": invalid}
    assert (published["status"], published["rows"]) == ("published", valid)
    assert (quarantined["status"], quarantined["rows"]) == ("quarantined", invalid)
    target = DeltaTable(plan["tables"]["target"]["path"]).to_pyarrow_table().column("order_id").to_pylist()
    assert sorted(target) == sorted(["O1", "O2", "O3", "O4", "O8", "O9"] + (["O6"] if v2 else []))
    rejected = DeltaTable(plan["tables"]["quarantine"]["path"]).to_pyarrow_table()
    assert sorted(rejected.column("order_id").to_pylist()) == sorted(["O5", "O7", "O10"] + ([] if v2 else ["O6"]))
    assert set(rejected.column("_submission_id").to_pylist()) == {"s-urn"}


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[2]).getOrCreate()
from contract_gate.contract.compiler import compile_plan
from contract_gate_spark.validation.diagnostics import split
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.runtime.session import get_session
found = {}
for name in sys.argv[3:]:
    plan = compile_plan(name).document
    df = spark.read.json(sys.argv[3].rsplit("/", 1)[0] + "/landing",
                         schema="order_id string, customer_id string, order_total double, currency string, "
                                "order_timestamp timestamp")
    report = run_validation(get_session(), plan, df)
    valid, invalid = split(df, plan)
    found[plan["contract"]["version"]] = {"id": plan["contract"]["id"], "rows": report["rows"],
                                          "split": [valid.count(), invalid.count()]}
print(json.dumps(found))
spark.stop()
"""


@pytest.mark.slow  # the Spark Connect server, a JVM of its own
def test_the_urn_contract_gates_its_batch_over_spark_connect(spark_connect_server, tmp_path):
    write_json(tmp_path / "landing", BATCH)
    contracts = []
    for v2 in (False, True):
        contract = tmp_path / f"orders_urn{'_v2' if v2 else ''}.yaml"
        contract.write_text(contract_text(v2), encoding="utf-8")
        contracts.append(str(contract))
    assert yaml.safe_load(Path(contracts[0]).read_text(encoding="utf-8"))["id"] == URN

    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "tests"), spark_connect_server.url, *contracts],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)

    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"1.0.0": {"id": URN, "rows": {"valid": 6, "invalid": 4}, "split": [6, 4]},
                     "2.0.0": {"id": URN, "rows": {"valid": 7, "invalid": 3}, "split": [7, 3]}}
