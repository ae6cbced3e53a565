"""``contract-gate preview``: a new contract version re-validates the batches the gate accepted,
read from their retained candidates or by time travel on the target, with exactly the per-rule
counts that validating each batch against it gives, and writes nothing."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest

from _gate_plans import order, version_of, write_json
from contract_gate import decisions
from contract_gate_plan.model import load_plan
from contract_gate.cli.main import main
from contract_gate_spark.steps.preview import preview
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.stage import stage_candidate
from contract_gate_spark.validation.engine import run_validation
from test_migration import orders_plan, orders_text

# the third batch holds two GBP orders, which v2 (no GBP) would have rejected
BATCHES = [[order(f"b{n}-{i}", currency="GBP" if n == 3 and i < 2 else "EUR", hour=n) for i in range(3)]
           for n in range(1, 6)]


def _accept(spark, plan: dict, root, n: int, rows: list[dict]) -> dict:
    """Stage, validate, publish and record one batch, as a gate does."""
    submission_id = f"sub-{n}"
    staged = stage_candidate(spark, plan, submission_id, str(write_json(root / "landings" / str(n), rows)))
    candidate = staged["candidate"]
    report = run_validation(spark, plan, spark.read.format("delta").option("versionAsOf", staged["version"])
                            .load(candidate["path"]))
    assert report["outcome"] == "pass"
    published = publish(spark, plan, submission_id, candidate, staged["version"])
    return decisions.record_decision(load_plan(plan), {
        "submission_id": submission_id, "contract_id": plan["contract"]["id"],
        "contract_version": plan["contract"]["version"], "outcome": "published",
        "candidate": {"candidate": candidate, "version": staged["version"]}, "rows_published": published["rows"],
        "target_version_before": published["target_version_before"],
        "target_version_after": published["target_version_after"], "run_id": f"run-{n}"})


def _failing(report: dict) -> dict[str, int | None]:
    return {rule["id"]: rule["failed_rows"] for rule in report["rules"] if rule["passed"] is False}


@pytest.mark.slow
def test_preview_counts_what_validating_each_accepted_batch_against_the_new_version_counts(spark, tmp_path, monkeypatch):
    v1 = orders_plan(tmp_path)
    accepted = [_accept(spark, v1, tmp_path, n, rows) for n, rows in enumerate(BATCHES, start=1)]
    v2 = orders_plan(tmp_path, "2.0.0", no_gbp=True)
    target, log = v1["tables"]["target"], v1["tables"]["decisions"]
    before = (version_of(spark, target), version_of(spark, log))
    # two candidates are gone (retention): those batches are read by time travel on the target
    for decision in accepted[1:3]:
        shutil.rmtree(decision["candidate"])

    result = preview(spark, v2, list(reversed(accepted)), target)

    by_batch = {batch["submission_id"]: batch for batch in result["batches"]}
    expected = {}
    for n, rows in enumerate(BATCHES, start=1):  # each batch validated on its own, from its rows
        path = str(write_json(tmp_path / "again" / str(n), rows))
        frame = spark.read.schema("order_id string, customer_id string, order_total double, currency string, "
                                  "order_timestamp timestamp").json(path)
        expected[f"sub-{n}"] = _failing(run_validation(spark, v2, frame))
    assert {sid: {r["id"]: r["failed_rows"] for r in batch["failing_rules"]} for sid, batch in by_batch.items()} \
        == expected
    currency_rule = next(iter(expected["sub-3"]))
    assert expected["sub-3"] == {currency_rule: 2} and not any(expected[f"sub-{n}"] for n in (1, 2, 4, 5))
    assert [by_batch[f"sub-{n}"]["outcome"] for n in range(1, 6)] == ["pass", "pass", "fail", "pass", "pass"]
    assert by_batch["sub-3"]["source"].startswith("target versions") and by_batch["sub-5"]["source"].startswith("candidate")
    # a decision row naming some other table is not read: the batch comes from the target
    elsewhere = preview(spark, v2, [{**accepted[0], "candidate": accepted[4]["candidate"]}], target)
    assert elsewhere["batches"][0]["source"].startswith("target versions")
    assert all(batch["rows"] == 3 for batch in result["batches"])
    assert result["rules"] == [{"id": currency_rule, "severity": "error", "failed_rows": 2, "batches": 1}]
    assert result["rejected_batches"] == 1
    assert (version_of(spark, target), version_of(spark, log)) == before  # nothing written

    # the command: the same, for the last N, with --json; exit 1 since one would have been rejected
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    new = tmp_path / "orders_v2.yaml"
    new.write_text(orders_text("2.0.0", no_gbp=True))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["preview", str(new), "--last", "3", "--json"])
    printed = json.loads(out.getvalue())
    assert code == 1
    assert [b["submission_id"] for b in printed["batches"]] == ["sub-5", "sub-4", "sub-3"]
    assert printed["rules"] == result["rules"]
    assert "GBP" not in out.getvalue()  # counts, never values
    with contextlib.redirect_stdout(io.StringIO()) as text:
        assert main(["preview", str(new), "--last", "2"]) == 0  # the last two would have passed
    assert "would have rejected 0 of 2 batch(es)" in text.getvalue()
