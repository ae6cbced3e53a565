"""The gate_job sub-commands the operators call: arguments in, result JSON out, exit 0."""

from __future__ import annotations

import json

import pytest

from _gate_plans import case, plan_for, table_rows, version_of, write_csv
from contract_gate_plan.model import load_plan
from contract_gate_spark.commands.gate_job import main


def _json(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.slow  # 8 s or more
def test_stage_validate_publish_quarantine_cleanup_through_gate_job(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    landing = write_csv(tmp_path / "drop", [case("NL-NH", 1), case("NL-UT", 1)])
    common = ["--plan", str(plan_file), "--submission-id", "cli-1"]

    assert main(["stage", *common, "--landing", str(landing), "--result", str(tmp_path / "stage.json")]) == 0
    staged = _json(tmp_path / "stage.json")
    assert (staged["status"], staged["version"], staged["row_count"]) == ("staged", 0, 2)

    assert main(["validate", "--plan", str(plan_file), "--candidate", staged["candidate"]["path"],
                 "--version", "0", "--submission-id", "cli-1", "--report", str(tmp_path / "report.json")]) == 0
    candidate = ["--candidate", json.dumps(staged["candidate"]), "--version", "0",
                 "--report", str(tmp_path / "report.json")]

    assert main(["publish", *common, *candidate, "--result", str(tmp_path / "publish.json")]) == 0
    published = _json(tmp_path / "publish.json")
    assert (published["status"], published["rows"]) == ("published", 2)
    assert published["target_version_after"] == version_of(spark, plan["tables"]["target"])

    assert main(["publish", *common, *candidate, "--result", str(tmp_path / "again.json")]) == 0
    assert _json(tmp_path / "again.json")["status"] == "already_published"

    assert main(["quarantine", *common, *candidate, "--rows", "invalid", "--result", str(tmp_path / "q.json")]) == 0
    assert _json(tmp_path / "q.json") == {"status": "quarantined", "rows": 0, "version": 1}

    assert main(["cleanup", "--plan", str(plan_file), "--result", str(tmp_path / "cleanup.json")]) == 0
    assert _json(tmp_path / "cleanup.json") == {"candidates_dropped": [], "quarantine_rows_deleted": 0}


def test_a_failing_step_exits_non_zero(spark, tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan_for("regional_daily_cases", tmp_path)), encoding="utf-8")

    assert main(["stage", "--plan", str(plan_file), "--submission-id", "none"]) == 1  # nothing landed


@pytest.mark.slow  # a long run: two gates end to end, about 19 s
def test_the_plans_cross_batch_key_rule_quarantines_a_batch_whose_keys_the_target_holds(spark, tmp_path):
    """``key.unique_across_batches`` is a rule of the plan: validation leaves it ``not_executed``,
    ``batch_keys`` (in the stage+validate job) measures it against the target and fills its entry,
    in plan order, with counts only. Under ``split_rows`` too, it judges the whole batch. The job
    that validates a candidate staged apart (``validate+batch_keys``) measures it the same way."""
    from contract_gate.operators.branch import PUBLISH, decide
    from contract_gate.operators.validate import summarize

    plan = plan_for("regional_daily_cases", tmp_path, violations={"policy": "split_rows"})
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    target = plan["tables"]["target"]
    plan_ids = [r["id"] for r in plan["rules"]]
    assert "key.unique_across_batches" in plan_ids

    def gate(submission: str, rows: list[tuple], staged_apart: bool = False) -> tuple[dict, dict, str]:
        landing = write_csv(tmp_path / f"drop-{submission}", rows)
        report_path = tmp_path / f"{submission}.report.json"
        common = ["--plan", str(plan_file), "--submission-id", submission]
        stage = ["--landing", str(landing), "--result", str(tmp_path / f"{submission}.stage.json")]
        if staged_apart:
            assert main(["stage", *common, *stage]) == 0
            staged = _json(tmp_path / f"{submission}.stage.json")
            assert main(["validate+batch_keys", *common, "--candidate", staged["candidate"]["path"],
                         "--version", str(staged["version"]), "--report", str(report_path)]) == 0
        else:
            assert main(["stage+validate+batch_keys", *common, *stage, "--report", str(report_path)]) == 0
        staged, report = _json(tmp_path / f"{submission}.stage.json"), _json(report_path)
        assert [r["id"] for r in report["rules"]][:len(plan_ids)] == plan_ids  # in plan order, not appended
        branch, reason = decide(load_plan(plan), summarize(report, report_path, staged))
        candidate = [*common, "--candidate", json.dumps(staged["candidate"]), "--version", str(staged["version"]),
                     "--report", str(report_path), "--result", str(tmp_path / f"{submission}.{branch}.json")]
        if branch == PUBLISH:
            assert main(["publish", *candidate]) == 0
        else:
            assert main(["publish", *candidate]) == 1  # the report refuses it
            assert main(["quarantine", *candidate, "--rows", "all"]) == 0
        rule = next(r for r in report["rules"] if r["id"] == "key.unique_across_batches")
        return rule, report, reason

    first, report, _ = gate("s1", [case("NL-NH", 1), case("NL-UT", 1)])
    assert (first["status"], first["failed_rows"], first["passed"], report["outcome"]) == ("evaluated", 0, True, "pass")
    published = version_of(spark, target)
    rows = sorted(tuple(r) for r in table_rows(spark, target))

    held, report, reason = gate("s2", [case("NL-NH", 1, 99), case("NL-FR", 1), case("NL-UT", 1, 7)])
    assert held == {"id": "key.unique_across_batches", "kind": "unique_across_batches", "scope": "target",
                    "columns": ["region_code", "report_date"], "severity": "error", "threshold": None,
                    "status": "evaluated", "failed_rows": 2, "evaluated_rows": 3, "measured": 2,
                    "passed": False, "reason": None}
    assert report["outcome"] == "fail" and report["rows"] == {"valid": 3, "invalid": 0}  # no row is marked
    assert "key.unique_across_batches" in reason  # quarantined whole, though split_rows could split
    assert version_of(spark, target) == published
    assert sorted(tuple(r) for r in table_rows(spark, target)) == rows
    quarantined = spark.read.format("delta").load(plan["tables"]["quarantine"]["path"]).filter("_submission_id = 's2'")
    assert [[e.rule_id for e in row._errors] for row in quarantined.collect()] == [["key.unique_across_batches"]] * 3

    again, report, _ = gate("s3", [case("NL-FR", 1), case("NL-UT", 1)], staged_apart=True)
    assert (again["failed_rows"], again["passed"], report["outcome"]) == (1, False, "fail")
    assert version_of(spark, target) == published

    new, report, _ = gate("s4", [case("NL-FR", 1), case("NL-UT", 2)], staged_apart=True)
    assert (new["status"], new["failed_rows"], new["passed"], report["outcome"]) == ("evaluated", 0, True, "pass")
    assert version_of(spark, target) == published + 1
    assert len(table_rows(spark, target)) == 4


def test_batch_keys_counts_beside_validate_when_stage_leaves_it_the_candidate(spark, tmp_path, monkeypatch):
    """In ``stage+validate+batch_keys`` the cross-batch count starts once the candidate is staged, on
    a thread of its own beside validation (``ahead``); in ``validate+batch_keys`` (no stage to name
    the candidate early) it runs at its own turn; for a batch without the contract's schema it does
    not run at all (the report fails the batch on that). The count itself is the same either way
    (``test_the_plans_cross_batch_key_rule...`` runs both chains)."""
    import threading

    from contract_gate_spark.steps import publish as steps

    counted_on: list[str] = []
    count = steps.keys_across_batches

    def recorded(*args, **kwargs):
        counted_on.append(threading.current_thread().name)
        return count(*args, **kwargs)

    monkeypatch.setattr(steps, "keys_across_batches", recorded)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan_for("regional_daily_cases", tmp_path)), encoding="utf-8")

    def chain(steps_: str, submission: str, landing) -> dict:
        report = tmp_path / f"{submission}.report.json"
        common = ["--plan", str(plan_file), "--submission-id", submission, "--report", str(report)]
        stage = ["--landing", str(landing), "--result", str(tmp_path / f"{submission}.stage.json")]
        if steps_.startswith("stage"):
            assert main([steps_, *common, *stage]) == 0
        else:
            assert main(["stage", *common[:4], *stage]) == 0
            staged = _json(tmp_path / f"{submission}.stage.json")
            assert main([steps_, *common, "--candidate", staged["candidate"]["path"], "--version", "0"]) == 0
        return _json(report)

    report = chain("stage+validate+batch_keys", "s1", write_csv(tmp_path / "d1", [case("NL-NH", 1)]))
    assert counted_on == ["contract-gate-batch-keys"]
    assert next(r for r in report["rules"] if r["id"] == "key.unique_across_batches")["status"] == "evaluated"

    counted_on.clear()
    chain("validate+batch_keys", "s2", write_csv(tmp_path / "d2", [case("NL-NH", 1)]))
    assert counted_on == ["MainThread"]

    counted_on.clear()
    no_status = tmp_path / "d3"
    no_status.mkdir()
    (no_status / "batch.csv").write_text("region_code,report_date,reporting_org,case_count\nNL-NH,2024-03-01,GGD,5\n")
    report = chain("stage+validate+batch_keys", "s3", no_status)
    assert report["schema"]["missing"] == ["status"] and report["outcome"] == "fail"
    assert counted_on == []
