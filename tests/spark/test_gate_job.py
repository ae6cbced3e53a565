"""The spark-submit entry point: exit 0 whatever the outcome, non-zero when the engine fails,
sub-commands from the registry, and a real spark-submit run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest
from _spark_plans import cases_df, cases_plan, good_row

from contract_gate_spark.commands import gate_job
from contract_gate_plan.document import fingerprint, read_document
from contract_gate_spark.runtime.session import submit_arguments

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def failing_candidate(spark, tmp_path):
    path = str(tmp_path / "candidate")
    cases_df(spark, [good_row(day=1), good_row(day=2, count=-1)]).write.format("delta").save(path)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(read_document(cases_plan())))
    return path, plan_path


def test_a_failing_batch_is_a_completed_validation(failing_candidate, tmp_path):
    path, plan_path = failing_candidate
    report_path = tmp_path / "report.json"
    code = gate_job.main(["validate", "--plan", str(plan_path), "--candidate", path, "--report", str(report_path), "--submission-id", "s-1"])
    report = json.loads(report_path.read_text())
    assert code == 0
    assert (report["outcome"], report["submission_id"], report["candidate"]["version"]) == ("fail", "s-1", 0)
    assert report["rows"] == {"valid": 1, "invalid": 1}


def test_an_engine_failure_is_a_non_zero_exit(failing_candidate, tmp_path):
    path, plan_path = failing_candidate
    missing = ["validate", "--plan", str(plan_path), "--candidate", str(tmp_path / "nothing"), "--report", str(tmp_path / "r.json")]
    assert gate_job.main(missing) == 1
    assert not (tmp_path / "r.json").exists()
    edited = json.loads(plan_path.read_text())
    edited["rules"] = edited["rules"][:1]
    plan_path.write_text(json.dumps(edited))
    assert gate_job.main(["validate", "--plan", str(plan_path), "--candidate", path, "--report", str(tmp_path / "r.json")]) == 1
    with pytest.raises(SystemExit) as usage:
        gate_job.main(["validate", "--plan", str(plan_path)])
    assert usage.value.code == 2


def test_steps_chain_through_the_shared_context(failing_candidate, tmp_path):
    path, plan_path = failing_candidate
    report_path = tmp_path / "chained.json"
    # a chain whose only step is validate, given the stage result a stage step would leave
    args = gate_job.build_parser().parse_args(["validate", "--plan", str(plan_path), "--report", str(report_path)])
    staged = {"stage": {"candidate": {"kind": "path", "path": path, "format": "delta"}, "version": 0, "row_count": 2}}
    args.context = staged
    assert gate_job._run(args) == 0
    assert staged["validate"]["candidate"]["table"] == path
    assert gate_job.main(["validate+validate", "--plan", str(plan_path), "--candidate", path, "--report", str(report_path)]) == 0


@pytest.mark.slow  # spark-submit: a JVM of its own
def test_runs_under_spark_submit(failing_candidate, tmp_path):
    path, plan_path = failing_candidate
    report_path = tmp_path / "submitted.json"
    spark_submit = Path(sys.executable).parent / "spark-submit"
    command = [
        str(spark_submit), "--master", "local[1]", *submit_arguments(),
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1",
        "--conf", "spark.databricks.delta.snapshotPartitions=1",
        str(ROOT / "spark_jobs" / "contract_gate_spark" / "commands" / "gate_job.py"), "validate",
        "--plan", str(plan_path), "--candidate", path, "--report", str(report_path),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_GATEWAY_PORT"}
    env |= {"SPARK_HOME": os.path.dirname(pyspark.__file__), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(report_path.read_text())
    assert (report["outcome"], report["rows"]["invalid"]) == ("fail", 1)
    # spark-submit merges the Python driver's stderr into its stdout
    start = done.stdout.find('{"candidate"')
    assert start >= 0, done.stdout[-3000:]
    summary, _ = json.JSONDecoder().raw_decode(done.stdout[start:])
    assert [r["id"] for r in summary["failing_rules"]] == ["case_count.minimum"]


def test_the_spark_side_refuses_a_hand_edited_plan_file(failing_candidate, tmp_path, caplog):
    """Plans travel through storage: an edit with a stale fingerprint, and an edit that
    recomputes the fingerprint but brings in java_method, are both refused before any rule
    runs, through the real ``gate_job.py validate`` path."""
    path, plan_path = failing_candidate
    compiled = json.loads(plan_path.read_text())
    java = f"java_method('java.io.File', 'createTempFile', 'cg', '', {json.dumps(str(tmp_path))}) IS NOT NULL"

    stale = json.loads(json.dumps(compiled))
    stale["rules"][0]["predicate"] = "`region_code` IS NOT NULL OR TRUE"
    refit = json.loads(json.dumps(compiled))
    refit["rules"][0]["predicate"] = java
    refit["fingerprint"] = fingerprint(refit)
    for edited, message in ((stale, "changed after it was compiled"), (refit, "function java_method() is not allowed")):
        plan_path.write_text(json.dumps(edited))
        report_path = tmp_path / "r.json"
        caplog.clear()
        argv = ["validate", "--plan", str(plan_path), "--candidate", path, "--report", str(report_path)]
        assert gate_job.main(argv) == 1
        assert message in caplog.text
        assert not report_path.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("cg")]  # java_method never ran
