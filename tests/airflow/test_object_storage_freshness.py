"""The JVM-free readers of a gate whose target and decision log are in a bucket of a real
S3-compatible server on 127.0.0.1 (moto's standalone server) reach them with the connection's
credentials, as the decision log's writer does: the freshness check reads the target's Delta log
statistics, and falls back to the accepted decisions; ``contract-gate status`` and the pages read
the decision log. No Spark: the target is written with ``deltalake``.
"""

from __future__ import annotations

import os
from datetime import date, datetime, timezone

import pyarrow as pa
import pytest
import yaml
from _airflow_gate import HOME, gate_home
from _landing_contracts import write_contract
from deltalake import CommitProperties, write_deltalake

from contract_gate import config
from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions import record_decision
from contract_gate.freshness.check import check_freshness
from contract_gate.freshness.decision_log import contract_decisions
from contract_gate.freshness.latest import latest_accepted, latest_from_decisions
from contract_gate.freshness.latest_value import SOURCE_DECISIONS, SOURCE_DELTA_LOG
from contract_gate.freshness.status import StatusStore
from contract_gate.object_storage import address_storage_options
from contract_gate.pages.data import recent_decisions, reruns_of
from contract_gate_plan.model import Plan

BUCKET = "cg-freshness"
ROOT = f"s3a://{BUCKET}/lakehouse"
CONNECTION = "cg_freshness_s3"
CONTRACT_ID = "cases_fresh_in_s3"
CONTRACTS = HOME / "object_storage_freshness_contracts"


@pytest.fixture(scope="module")
def lake(s3_server):
    names = {config.environment_variable("roots"): ROOT,
             config.environment_variable("landing_roots"): f"s3a://{BUCKET}/drops",
             f"AIRFLOW_CONN_{CONNECTION.upper()}": s3_server.connection()}
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(names)
    s3_server.client().create_bucket(Bucket=BUCKET)
    path = write_contract(CONTRACTS, CONTRACT_ID)
    document = yaml.safe_load(path.read_text())
    document["servers"] = [{"server": "lake", "type": "local", "environment": "dev", "path": ROOT, "format": "delta"}]
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate.pop("decisions", None)
    gate.update(landing={"path": f"s3a://{BUCKET}/drops/{CONTRACT_ID}", "format": "csv", "connection": CONNECTION},
                target={"path": f"{ROOT}/{CONTRACT_ID}", "connection": CONNECTION},
                quarantine={"path": f"{ROOT}/{CONTRACT_ID}_quarantine", "connection": CONNECTION})
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    try:
        with gate_home():
            yield compile_plan(path)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def publish(plan: Plan, day: date, submission_id: str) -> int:
    """An accepted batch as the publish step leaves it: rows in the target, the commit tagged."""
    target = plan.require_tables().target
    rows = pa.table({"region_code": ["F0", "F1"], "report_date": [day, day], "reporting_org": ["Org-A"] * 2,
                     "case_count": [10, 11], "status": ["final"] * 2})
    write_deltalake(target.deltalake_uri, rows, mode="append", storage_options=address_storage_options(plan, target),
                    commit_properties=CommitProperties(custom_metadata={"userMetadata": submission_id}))
    record_decision(plan, {"submission_id": submission_id, "contract_id": plan.contract_id,
                           "contract_version": plan.contract_version, "outcome": "published",
                           "latest_business_date": day.isoformat()})
    return day.toordinal()


def test_freshness_reads_the_s3_target_and_decision_log_with_the_connections_credentials(lake, tmp_path):
    plan = lake
    assert plan.require_tables().target.location.startswith("s3a://")
    before = latest_accepted(plan)
    assert before.value is None and before.source == SOURCE_DELTA_LOG  # the target does not exist yet

    publish(plan, date(2025, 5, 2), "fresh-s3-1")
    latest = latest_accepted(plan)
    assert (latest.value, latest.submission_id, latest.target_version, latest.source) == (
        date(2025, 5, 2), "fresh-s3-1", 0, SOURCE_DELTA_LOG)
    from_log = latest_from_decisions(plan)
    assert (from_log.value, from_log.submission_id, from_log.source) == (date(2025, 5, 2), "fresh-s3-1", SOURCE_DECISIONS)

    record = check_freshness(plan, now=datetime(2025, 5, 3, 12, tzinfo=timezone.utc), store=StatusStore(tmp_path))
    assert (record["latest_accepted_date"], record["latest_accepted_submission"], record["source"]) == (
        "2025-05-02", "fresh-s3-1", SOURCE_DELTA_LOG)

    # contract-gate status and the pages read the same decision log
    assert [row["submission_id"] for row in contract_decisions(plan)] == ["fresh-s3-1"]
    listed = recent_decisions([plan], limit=5)[plan.names.gate]
    assert [row["submission_id"] for row in listed] == ["fresh-s3-1"]
    assert reruns_of(plan, "fresh-s3-1") == []
