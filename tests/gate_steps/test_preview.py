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
    assert "would reject more than the gate did in 0 of 2 batch(es)" in text.getvalue()


def _gate(spark, plan: dict, root, submission_id: str, rows: list[dict]) -> dict:
    """Stage, validate, branch, publish/split and record one batch, as a gate does."""
    from contract_gate.operators.branch import decide
    from contract_gate.operators.validate import summarize
    from contract_gate_spark.steps.quarantine import quarantine

    staged = stage_candidate(spark, plan, submission_id, str(write_json(root / "landings" / submission_id, rows)))
    candidate, version = staged["candidate"], staged["version"]
    report = run_validation(spark, plan, spark.read.format("delta").option("versionAsOf", version)
                            .load(candidate["path"]))
    branch, _ = decide(load_plan(plan), summarize(report, root / "report.json", staged))
    assert branch in ("publish", "split")
    published = publish(spark, plan, submission_id, candidate, version, "valid" if branch == "split" else "all")
    quarantined = quarantine(spark, plan, submission_id, candidate, version, report, "invalid") \
        if branch == "split" else {"rows": 0}
    return decisions.record_decision(load_plan(plan), {
        "submission_id": submission_id, "contract_id": plan["contract"]["id"],
        "contract_version": plan["contract"]["version"], "outcome": "split" if branch == "split" else "published",
        "candidate": candidate["path"], "candidate_version": version, "rows_landed": len(rows),
        "rows_published": published["rows"], "rows_quarantined": quarantined["rows"],
        "target_version_before": published["target_version_before"],
        "target_version_after": published["target_version_after"]})


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.mark.slow  # three batches gated, then previewed and validated four times
def test_preview_and_validate_target_say_what_the_gate_decides_for_split_batches_and_a_new_optional_column(
        spark, tmp_path, monkeypatch):
    """The deployed, unchanged version previews a split batch as the same split (no change, exit
    0); a version adding an optional column judges the batches and today's table as the gate
    would after its migration (the column NULL, a pending migration, not a missing column); a
    version that rejects more is still caught."""
    v1 = orders_plan(tmp_path)
    _gate(spark, v1, tmp_path, "clean-1", [order(f"c1-{i}") for i in range(3)])
    split = _gate(spark, v1, tmp_path, "split-2", [order("s2-0"), order("s2-1"), order("s2-2", total=-5.0)])
    _gate(spark, v1, tmp_path, "clean-3", [order(f"c3-{i}", currency="GBP" if i == 0 else "EUR") for i in range(3)])
    assert (split["outcome"], split["rows_published"], split["rows_quarantined"]) == ("split", 2, 1)
    target, log = v1["tables"]["target"], v1["tables"]["decisions"]
    before = (version_of(spark, target), version_of(spark, log))
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    unchanged, optional, tightened = tmp_path / "v1.yaml", tmp_path / "v1_1.yaml", tmp_path / "v2.yaml"
    unchanged.write_text(orders_text("1.0.0"))
    optional.write_text(orders_text("1.1.0", coupon=True))
    tightened.write_text(orders_text("2.0.0", no_gbp=True))

    code, out = _cli("preview", str(unchanged), "--last", "5", "--json")
    same = json.loads(out)
    assert code == 0 and same["rejected_batches"] == 0
    by_id = {batch["submission_id"]: batch for batch in same["batches"]}
    assert (by_id["split-2"]["gate"]["decision"], by_id["split-2"]["gate"]["rows_published"]) == ("split", 2)
    assert by_id["split-2"]["recorded"] == {"outcome": "split", "rows_published": 2, "rows_quarantined": 1}
    assert {batch["change"] for batch in same["batches"]} == {"same"}
    code, out = _cli("preview", str(unchanged), "--last", "5")
    assert code == 0 and "recorded split 2 of 3, would be split 2 of 3 -> SAME" in out
    assert "would reject more than the gate did in 0 of 3 batch(es)" in out
    shutil.rmtree(split["candidate"])  # read from the target now: only its 2 published rows, the same
    code, out = _cli("preview", str(unchanged), "--last", "5", "--json")
    assert code == 0 and {b["submission_id"]: b["change"] for b in json.loads(out)["batches"]}["split-2"] == "same"

    code, out = _cli("preview", str(optional), "--last", "5", "--json")
    added = json.loads(out)
    assert code == 0 and added["rejected_batches"] == 0
    assert all(b["added_columns"] == ["coupon"] and b["schema"]["ok"] for b in added["batches"])
    code, out = _cli("validate", str(optional), "--target")
    assert code == 0 and "pending migration: the gate's next publish adds column(s) coupon" in out
    assert "missing column" not in out and "schema (strict): FAILED" not in out
    code, out = _cli("validate", str(optional), "--target", "--json")
    assert json.loads(out)["pending_migration"] == {"adds_columns": ["coupon"]}

    code, out = _cli("preview", str(tightened), "--last", "5", "--json")
    tighter = {b["submission_id"]: b for b in json.loads(out)["batches"]}
    assert code == 1 and tighter["clean-3"]["change"] == "rejects more"
    assert tighter["clean-3"]["gate"]["decision"] == "split" and tighter["clean-3"]["gate"]["rows_published"] == 2
    assert (version_of(spark, target), version_of(spark, log)) == before  # nothing written


def test_a_batch_whose_rows_are_no_longer_where_it_was_published_is_listed_unreadable_not_read_elsewhere(
        spark, tmp_path):
    """Found by the soak walk: after a new major version with a new target, preview of batches
    accepted under the old one read the new target at their old versions (DELTA_VERSION_NOT_FOUND,
    exit 2; or, had the version existed, another batch's rows). A batch whose candidate is gone is
    read from the target only at a commit that batch made."""
    plan = orders_plan(tmp_path)
    accepted = [_accept(spark, plan, tmp_path, n, rows) for n, rows in enumerate(BATCHES[:3], start=1)]
    kept = accepted.pop()
    for decision in accepted:
        shutil.rmtree(decision["candidate"])
    target = plan["tables"]["target"]
    first, second = accepted
    moved = [{**first, "target_version_after": second["target_version_after"]},  # another batch's commit
             {**second, "target_version_after": 15}]  # not in this target's log

    result = preview(spark, plan, moved, target)

    assert result["batches"] == [] and result["rules"] == []
    assert [gone["submission_id"] for gone in result["unreadable"]] == ["sub-1", "sub-2"]
    assert all("holds no commit" in gone["reason"] for gone in result["unreadable"])
    assert preview(spark, plan, [second], target)["batches"][0]["source"].startswith("target versions")
    # a retained candidate is the whole batch, whatever the target holds (its columns are its own)
    elsewhere = preview(spark, plan, [{**kept, "target_version_after": 15}], target)
    assert elsewhere["batches"][0]["source"].startswith("candidate") and elsewhere["batches"][0]["rows"] == 3
