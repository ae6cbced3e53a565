"""The gate_job sub-commands the operators call: arguments in, result JSON out, exit 0."""

from __future__ import annotations

import json

from _gate_plans import case, plan_for, version_of, write_csv
from spark_jobs.commands.gate_job import main


def _json(path):
    return json.loads(path.read_text(encoding="utf-8"))


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
