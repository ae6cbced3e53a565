"""History rules against the decision log, with real Spark, real Delta and a real path decision
store: a batch's row count and a column's null share bounded by the median of the last accepted
batches of the same object. Each batch goes through the gate's own pieces in order: the history
read from the decision log (``accepted_history``), the validation handed it, the branch
(``decide``), publish or quarantine, and the decision (``verdict``, ``record_decision``)."""

from __future__ import annotations

import itertools
from datetime import timedelta
import json
from pathlib import Path

import pytest

from _gate_plans import table_rows, version_of
from contract_gate import decisions
from contract_gate.contract.compiler import compile_plans
from contract_gate.decisions.batch_history import accepted_history, null_counts
from contract_gate.operators.branch import PUBLISH, QUARANTINE, decide
from contract_gate.operators.record import verdict
from contract_gate.operators.validate import GateValidateOperator, summarize
from contract_gate_plan.addresses import HOME_ENV
from contract_gate_plan.document import render_plan
from contract_gate_plan.model import Plan
from contract_gate_spark.commands import gate_job
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: history_orders
version: 1.0.0
status: active
schema:
  - name: orders
    physicalType: table
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
        customProperties:
          - property: contractGate
            value: {history: {batches: 5, within: 10}}
    properties:
      - {name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}
      - name: note
        physicalType: string
        logicalType: string
        quality:
          - metric: nullValues
            unit: percent
            mustBeLessOrEqualTo: 100
            customProperties:
              - property: contractGate
                value: {history: {batches: 3, within: 2}}
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/orders, format: parquet}
      violations: {policy: split_rows}
"""
_KEYS = itertools.count()
ROWS = "dataset.rowCount"
NULLS = "note.nullValues"


@pytest.fixture
def plan(tmp_path: Path, monkeypatch) -> Plan:
    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    (tmp_path / "orders.yaml").write_text(CONTRACT, encoding="utf-8")
    return compile_plans(tmp_path / "orders.yaml").plan()


def gate(spark, plan: Plan, name: str, rows: int, nulls: int = 0) -> tuple[dict, dict]:
    """One submission of ``rows`` rows (``nulls`` of them without a note) through the gate's
    pieces; returns (report, decision)."""
    root = Path(plan.require_tables().require_target().location).parent
    address = {"kind": "path", "path": str(root / "candidates" / name), "format": "delta"}
    first = next(_KEYS)  # business keys never repeat across batches (append refuses a key the target holds)
    data = [(first * 10_000 + i, None if i < nulls else f"n{i}") for i in range(rows)]
    spark.createDataFrame(data, "order_id bigint, note string").write.format("delta").save(address["path"])

    # the validate task's job: its plan file, the history it reads before the job, the job's validate step
    folder = root / "runs" / name
    folder.mkdir(parents=True)
    plan_file = folder / "plan.json"
    plan_file.write_text(render_plan(plan.document), encoding="utf-8")
    history = GateValidateOperator.write_history(plan, folder)
    assert history == folder / "history.json"
    assert gate_job.main(["validate", "--plan", str(plan_file), "--candidate", address["path"], "--version", "0",
                          "--report", str(folder / "report.json"), "--submission-id", name,
                          "--history", str(history)]) == 0
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    summary = summarize(report, folder / "report.json",
                        {"candidate": address, "version": 0, "row_count": report["candidate"]["row_count"]})
    summary["null_counts"] = null_counts(plan, report["rules"])
    branch, _ = decide(plan, summary)
    results: dict = {}
    if branch == PUBLISH:
        results["publish"] = {"publish": publish(spark, plan, name, address, 0, "all", report=report)}
    elif branch == QUARANTINE:
        results["quarantine"] = {"quarantine": quarantine(spark, plan, name, address, 0, report=report)}
    record = verdict({"submission_id": name}, summary, results, {})
    record.update(contract_id=plan.contract_id, contract_version=plan.contract_version, object=plan.object,
                  plan_fingerprint=plan.fingerprint)
    return report, decisions.record_decision(plan, record)


def entry(report: dict, rule_id: str) -> dict:
    return next(rule for rule in report["rules"] if rule["id"] == rule_id)


def target_state(spark, plan: Plan) -> tuple[int, list]:
    target = plan.require_tables().require_target().as_document()
    return version_of(spark, target), sorted(row["order_id"] for row in table_rows(spark, target))


def test_a_batch_of_one_percent_of_the_usual_volume_is_quarantined_after_five_accepted(spark, plan):
    sizes = [200, 180, 220, 190, 210]
    for n, size in enumerate(sizes):
        report, decision = gate(spark, plan, f"s{n}", size, nulls=size // 10)
        rows = entry(report, ROWS)
        # fewer than 5 accepted: a warning that says so, never a silent pass and never a rejection
        assert (report["outcome"], rows["severity"], rows["passed"]) == ("warn", "warning", False)
        assert rows["reason"].startswith(f"the history is too short: {n} of the 5 accepted batches")
        assert rows["history"] == {"batches": 5, "within": 10, "accepted": n, "median": None}
        assert decision["outcome"] == "published"
        assert "history rules: dataset.rowCount: the history is too short" in decision["reason"]
        assert decision["null_counts"] == {NULLS: size // 10} and decision["rows_landed"] == size
    before = target_state(spark, plan)

    report, decision = gate(spark, plan, "tiny", 2)  # 1% of the usual 200

    rows = entry(report, ROWS)
    assert (report["outcome"], rows["severity"], rows["passed"], rows["measured"]) == ("fail", "error", False, 2)
    assert rows["history"] == {"batches": 5, "within": 10, "accepted": 5, "median": 200}
    assert rows["reason"] == ("2 rows against a median of 200 rows of the last 5 accepted batches, "
                              "within a factor 10: 20 to 2000 rows")
    # split_rows, but a batch-level rule marks no row: the whole batch is quarantined
    assert decision["outcome"] == "quarantined" and decision["rows_quarantined"] == 2
    assert decision["failed_rules"] == [ROWS] and decision["rows_published"] == 0
    assert f"{ROWS}: 2 rows against a median of 200 rows" in decision["reason"]
    assert "within a factor 10" in decision["reason"]
    assert target_state(spark, plan) == before  # the target's Delta version and rows unchanged

    # a quarantined batch is no history: the next usual batch is judged on the same 5 and passes
    report, decision = gate(spark, plan, "usual", 195, nulls=20)
    assert (entry(report, ROWS)["passed"], entry(report, ROWS)["history"]["median"]) == (True, 200)
    assert report["outcome"] == "pass" and decision["outcome"] == "published"


def test_a_null_share_far_above_the_usual_is_quarantined_and_names_only_counts(spark, plan):
    for n in range(3):
        report, decision = gate(spark, plan, f"s{n}", 100, nulls=10 + n)  # 10%, 11%, 12% nulls
        assert entry(report, NULLS)["reason"].startswith(f"the history is too short: {n} of the 3")
        assert decision["outcome"] == "published"
    report, _ = gate(spark, plan, "fine", 100, nulls=20)  # 20% <= 2 x the median 11%
    assert entry(report, NULLS)["passed"] is True and entry(report, NULLS)["history"]["median"] == 11
    before = target_state(spark, plan)

    report, decision = gate(spark, plan, "holes", 100, nulls=50)

    nulls = entry(report, NULLS)
    assert (nulls["passed"], nulls["severity"], nulls["failed_rows"]) == (False, "error", 50)
    # the last 3 accepted: 20%, 12%, 11%
    assert nulls["reason"] == ("50% nulls against a median of 12% nulls of the last 3 accepted batches, "
                               "within a factor 2: at most 24% nulls")
    assert decision["outcome"] == "quarantined" and decision["null_counts"] == {NULLS: 50}
    assert f"{NULLS}: 50% nulls against a median of 12% nulls" in decision["reason"]
    assert "n1" not in str(report) + str(decision)  # counts and shares only, never a value
    assert target_state(spark, plan) == before


def test_without_the_gates_history_a_rule_says_it_was_not_judged_on_it(spark, plan, tmp_path):
    """``validate`` of a file or a target, a preview, a notebook: no decision log is read, and the
    report says so (a warning) rather than passing the rule silently or rejecting the data."""
    address = str(tmp_path / "loose")
    spark.createDataFrame([(1, "a")], "order_id bigint, note string").write.format("delta").save(address)

    report = run_validation(spark, plan, read_candidate(spark, address, format="delta"))

    assert report["outcome"] == "warn"
    for rule_id in (ROWS, NULLS):
        judged = entry(report, rule_id)
        assert (judged["severity"], judged["passed"]) == ("warning", False)
        assert judged["reason"].startswith("not judged on its history here")
        assert judged["history"]["accepted"] is None


def test_a_failed_threshold_stays_an_error_while_the_history_is_short(spark, plan, tmp_path):
    address = str(tmp_path / "empty")
    spark.createDataFrame([], "order_id bigint, note string").write.format("delta").save(address)

    report = run_validation(spark, plan, read_candidate(spark, address, format="delta"), submission_id="e",
                            history=accepted_history(plan, decisions.store_for(plan)))

    rows = entry(report, ROWS)
    assert (rows["severity"], rows["passed"], report["outcome"]) == ("error", False, "fail")
    assert "the history is too short: 0 of the 5" in rows["reason"]


def test_the_decision_store_reads_only_accepted_batches_of_the_object_newest_first(plan):
    from contract_gate.decisions import Decision

    store = decisions.store_for(plan)
    scope = decisions.ObjectScope.of(plan)
    for n, outcome in enumerate(["published", "quarantined", "split", "failed", "published"]):
        store.record(Decision(submission_id=f"s{n}", contract_id=plan.contract_id, contract_version="1.0.0",
                              outcome=outcome, rows_landed=10 + n, object=plan.object, run_id=f"r{n}",
                              null_counts={NULLS: n}), scope)
    store.record(Decision(submission_id="other", contract_id=plan.contract_id, contract_version="1.0.0",
                          outcome="published", rows_landed=1, object="another_object"),
                 decisions.ObjectScope("another_object", sole=False))

    accepted = store.accepted_batches(plan.contract_id, scope, 5)

    assert [(d.submission_id, d.rows_landed, d.null_counts) for d in accepted] == [
        ("s4", 14, {NULLS: 4}), ("s2", 12, {NULLS: 2}), ("s0", 10, {NULLS: 0})]
    assert [d.submission_id for d in store.accepted_batches(plan.contract_id, scope, 2)] == ["s4", "s2"]
    history = accepted_history(plan, store)
    assert history[ROWS] == [{"submission_id": s, "rows": r, "nulls": None} for s, r in (("s4", 14), ("s2", 12), ("s0", 10))]
    assert history[NULLS] == [{"submission_id": s, "rows": r, "nulls": k} for s, r, k in (("s4", 14, 4), ("s2", 12, 2))][:3] \
        + [{"submission_id": "s0", "rows": 10, "nulls": 0}]


def test_a_decision_table_from_before_null_counts_gets_the_column_and_keeps_its_records(tmp_path):
    """The layout migration path: a table written before the column gets it (a map of counts) from
    the first record; its older rows read back with no null counts, so they hold no null history."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    from _decision_writers import T0, decision, decisions_plan
    from contract_gate.decisions.delta_path import LAYOUT_PROPERTIES, SCHEMA
    from contract_gate_plan.ownership import owner_properties

    path = str(tmp_path / "decisions")
    old_schema = pa.schema([field for field in SCHEMA if field.name != "null_counts"])
    table = DeltaTable.create(path, old_schema, partition_by=["contract_id"], name="contract_gate_decisions",
                              configuration=LAYOUT_PROPERTIES)
    table.alter.set_table_properties(owner_properties(None, "decisions"), raise_if_not_exists=False)
    row = decision("old", "orders", rows_landed=40).as_row()
    row.pop("null_counts")
    row["rule_failures"] = list(row["rule_failures"].items())
    write_deltalake(path, pa.Table.from_pylist([row], schema=old_schema), mode="append")
    orders = decisions_plan(path, "orders")

    decisions.record_decision(orders, decision("new", "orders", rows_landed=50, null_counts={NULLS: 5},
                                               decided_at=T0 + timedelta(minutes=1)))

    assert [field.name for field in DeltaTable(path).schema().fields][-1] == "null_counts"
    accepted = decisions.store_for(orders).accepted_batches("orders", decisions.ObjectScope.of(orders), 5)
    assert [(d.submission_id, d.rows_landed, d.null_counts) for d in accepted] == [
        ("new", 50, {NULLS: 5}), ("old", 40, {})]


def test_the_catalog_store_reads_the_same_accepted_batches_through_spark_sql(spark, tmp_path):
    """The Unity Catalog store's query, run through local Spark SQL (the dialect Databricks SQL
    extends) against a local Delta table, as tests/gate_steps/test_unity_catalog.py does."""
    from _catalog_sql import LocalSparkSql
    from _decision_writers import T0, decision
    from contract_gate.decisions.record import ObjectScope
    from contract_gate.decisions.unity_catalog import UnityCatalogDecisionStore

    name = f"cg_history_{abs(hash(str(tmp_path))) % 10**8}"
    spark.sql(f"CREATE DATABASE spark_catalog.{name} LOCATION '{tmp_path}/warehouse'")
    try:
        store = UnityCatalogDecisionStore(f"spark_catalog.{name}.decisions", LocalSparkSql(spark))
        scope = ObjectScope("orders", sole=True)
        for n, outcome in enumerate(["published", "quarantined", "split", "published"]):
            store.record(decision(f"s{n}", "orders", outcome, rows_landed=10 + n, null_counts={NULLS: n},
                                  decided_at=T0 + timedelta(minutes=n), object="orders" if n else None), scope)

        accepted = store.accepted_batches("orders", scope, 2)

        assert [(d.submission_id, d.rows_landed, d.null_counts) for d in accepted] == [
            ("s3", 13, {NULLS: 3}), ("s2", 12, {NULLS: 2})]
        assert [d.submission_id for d in store.accepted_batches("orders", scope, 5)] == ["s3", "s2", "s0"]
        assert store.accepted_batches("orders", ObjectScope("returns", sole=False), 5) == []
    finally:
        spark.sql(f"DROP DATABASE spark_catalog.{name} CASCADE")


def test_validate_target_says_it_cannot_judge_a_history_rule_where_the_gate_does(spark, plan, tmp_path):
    """The whole target is no batch and ``validate`` reads no decision log: its report says the
    null-share rule was not judged on its history (a warning), and leaves the row count rule
    ``not_executed`` with its reason, as any row count bound under ``--target``: never a silent pass."""
    import contextlib
    import io

    from contract_gate.cli.main import main

    gate(spark, plan, "first", 10, nulls=1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["validate", str(tmp_path / "orders.yaml"), "--target", "--json"])

    report = json.loads(out.getvalue())
    assert report["outcome"] == "warn" and code == 0
    nulls = entry(report, NULLS)
    assert (nulls["severity"], nulls["passed"]) == ("warning", False)
    assert nulls["reason"].startswith("not judged on its history here: only a gate reads")
    rows = entry(report, ROWS)  # a row count bounds a batch, not the table: --target leaves it, and says so
    assert rows["passed"] is not True and rows["reason"]
    assert rows["status"] == "not_executed" or rows["reason"].startswith("not judged on its history here")


def test_a_preview_says_it_does_not_judge_a_history_rule(spark, plan):
    """``preview`` re-validates accepted batches without a decision log's history: each batch's
    history rules say they were not judged on it, in the data and in the text."""
    from contract_gate.evolution.preview import accepted_batches, judge, render
    from contract_gate_spark.steps.preview import preview

    gate(spark, plan, "accepted", 10, nulls=1)
    batches = accepted_batches(plan, 5)
    assert [batch["submission_id"] for batch in batches] == ["accepted"]

    result = judge(plan, preview(spark, plan, batches, plan.require_tables().require_target()), batches, decide)

    (batch,) = result["batches"]
    said = {rule["id"]: rule for rule in batch["failing_rules"]}
    assert batch["outcome"] == "warn" and batch["gate"]["decision"] == PUBLISH
    for rule_id in (ROWS, NULLS):
        assert said[rule_id]["severity"] == "warning"
        assert said[rule_id]["reason"].startswith("not judged on its history here")
    assert f"{ROWS} (warning): - rows; not judged on its history here" in render(result)
