"""A preview task before deploy (``ContractPreviewOperator`` through ``dag.test()``, local Spark in the
task's process, Delta): a new contract version that would have rejected an accepted batch fails the
task; a relaxed one, or a window of batches it would have accepted, passes; nothing is written.

Apart from the other evolution tests (``test_airflow_evolution.py``, over Spark Connect): the
preview runs classic Spark in the test's process, which cannot share a process with a Connect client."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from _airflow_gate import REPO, gate_home

PREVIEWED = "previewed_orders"
PREVIEW_DAGS = "preview_dags.py"


def previewed_contract(gate, version: str, *, yen: bool = False, no_gbp: bool = False) -> Path:
    """The orders example as contract ``previewed_orders`` at ``version`` (no DAG of its own: the
    test publishes its batches directly)."""
    document = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text(encoding="utf-8"))
    document.update(id=PREVIEWED, version=version)
    document["schema"][0]["name"] = PREVIEWED
    document["slaProperties"][0]["element"] = f"{PREVIEWED}.order_timestamp"
    allowed = next(p for p in document["schema"][0]["properties"] if p["name"] == "currency")[
        "quality"][0]["implementation"]["check"]["arguments"]["allowed"]
    allowed[:] = [*(c for c in allowed if not (no_gbp and c == "'GBP'")), *(["'JPY'"] if yen else [])]
    next(c for c in document["customProperties"] if c["property"] == "contractGate")["value"]["landing"]["path"] = \
        f"landing/{PREVIEWED}"
    path = gate.home / "preview_contracts" / f"{PREVIEWED}_{version}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def accept_batches(spark, gate, contract: Path, count: int) -> None:
    """``count`` batches published to the contract's target and recorded as accepted; the third
    holds two GBP orders."""
    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan
    from contract_gate_spark.steps.publish import publish

    with gate_home():
        plan = compile_plan(contract)
        for n in range(1, count + 1):
            candidate = {"kind": "path", "path": str(gate.home / "preview_batches" / str(n)), "format": "delta"}
            rows = [(f"P{n}-{i}", "C-1", 10.0 + i, "GBP" if n == 3 and i < 2 else "EUR") for i in range(3)]
            spark.createDataFrame(rows, "order_id string, customer_id string, order_total double, currency string") \
                .selectExpr("*", f"timestamp'2024-03-0{n} 01:00:00' AS order_timestamp") \
                .write.format("delta").save(candidate["path"])
            published = publish(spark, plan, f"preview-{n}", candidate, 0)
            decisions.record_decision(plan, {
                "submission_id": f"preview-{n}", "contract_id": PREVIEWED, "contract_version": "1.0.0",
                "outcome": "published", "rows_published": published["rows"],
                "target_version_before": published["target_version_before"],
                "target_version_after": published["target_version_after"]})


@pytest.mark.slow  # five batches published, two DAG runs re-validating them
def test_a_preview_task_before_deploy_fails_for_a_version_that_would_have_rejected_an_accepted_batch(gate, spark):
    accept_batches(spark, gate, previewed_contract(gate, "1.0.0"), 5)
    contracts = {"relaxed": previewed_contract(gate, "1.1.0", yen=True),
                 "tightened": previewed_contract(gate, "2.0.0", no_gbp=True)}
    (gate.dags / PREVIEW_DAGS).write_text(f'''"""Preview DAGs of tests/airflow/test_airflow_preview_task.py."""
from datetime import datetime, timezone

from airflow.sdk import DAG
from contract_gate.operators import ContractPreviewOperator

for name, contract in {({k: str(v) for k, v in contracts.items()})!r}.items():
    with DAG(f"preview_{{name}}", schedule=None, start_date=datetime(2024, 1, 1, tzinfo=timezone.utc)) as dag:
        ContractPreviewOperator(task_id="preview", contract=contract, last="{{{{ dag_run.conf.get('last', 5) }}}}")
    globals()[f"preview_{{name}}"] = dag
''')
    gate.reset_bag()
    target = f"lakehouse/{PREVIEWED}"
    before = gate.version(target)
    try:
        relaxed = gate.run("preview_relaxed")
        tightened = gate.run("preview_tightened")
        recent = gate.run("preview_tightened", last=2)  # the two newest batches have no GBP order
    finally:
        (gate.dags / PREVIEW_DAGS).unlink()
        gate.reset_bag()

    assert relaxed.states["preview"] == "success"
    assert (len(relaxed.xcoms["preview"]["batches"]), relaxed.xcoms["preview"]["rejected_batches"]) == (5, 0)
    assert tightened.states["preview"] == "failed"
    assert recent.states["preview"] == "success" and len(recent.xcoms["preview"]["batches"]) == 2
    assert gate.version(target) == before  # nothing written
