"""The background loading of the Delta snapshots a gate job is about to read (``contract_gate_spark.commands.warm_up``)."""

from __future__ import annotations

import json

from _gate_plans import cases_df, case, plan_for
from contract_gate_plan.addresses import Address
from contract_gate_spark.commands import warm_up
from contract_gate_spark.commands.gate_job import build_parser, main
from contract_gate_spark.runtime.job_start import LOCAL_START_ENV
from contract_gate_spark.commands.warm_up import load_snapshots


def _snapshot(spark, path):
    """The snapshot Delta keeps for ``path`` in this JVM (the one every later query of it gets)."""
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
    return log.unsafeVolatileSnapshot()


def test_the_snapshot_a_later_query_gets_has_its_state_loaded(spark, tmp_path):
    path = str(tmp_path / "t")
    cases_df(spark, [case("NL-NH", 1), case("NL-UT", 1)]).write.format("delta").save(path)
    assert not _snapshot(spark, path).stateReconstructionTriggered()

    load_snapshots(spark, [({"kind": "path", "path": path, "format": "delta"}, None)]).join(timeout=300)

    assert _snapshot(spark, path).stateReconstructionTriggered()


def test_missing_and_unreadable_tables_are_left_to_the_job(spark, tmp_path):
    (tmp_path / "not_delta").mkdir()
    (tmp_path / "not_delta" / "x.txt").write_text("stray")
    warm = load_snapshots(spark, [(str(tmp_path / "absent"), None), (str(tmp_path / "not_delta"), None),
                                  ({"kind": "table", "name": "spark_catalog.no_such_schema.t", "format": "delta"}, 3)])
    warm.join(timeout=300)
    assert not warm.is_alive()


def _tables_read(argv):
    args = build_parser().parse_known_args(argv)[0]
    return getattr(args, "tables_read", lambda _: [])(args)


def test_each_step_names_the_tables_it_will_read(tmp_path):
    append, replace = tmp_path / "append.json", tmp_path / "replace.json"
    plan = plan_for("regional_daily_cases", tmp_path)
    append.write_text(json.dumps(plan))
    replace.write_text(json.dumps(plan_for("regional_daily_cases", tmp_path, publication={"mode": "replace_keys"})))
    target = Address.of(plan["tables"]["target"])
    candidate = ["--candidate", "/c", "--version", "4", "--report", "r.json", "--submission-id", "s"]

    assert _tables_read(["publish", "--plan", str(append), *candidate]) == [(target, None), ("/c", 4)]
    assert _tables_read(["split", "--plan", str(append), *candidate]) == [(target, None), ("/c", 4)]
    assert _tables_read(["quarantine", "--plan", str(append), *candidate]) == [("/c", 4)]
    keys = ["--submission-id", "s", "--report", "r.json"]
    assert _tables_read(["batch_keys", "--plan", str(append), *keys]) == [(target, None)]
    assert _tables_read(["batch_keys", "--plan", str(replace), *keys]) == []  # no check across batches
    assert _tables_read(["stage", "--plan", str(append), "--submission-id", "s"]) == []


def test_only_jobs_of_the_local_runner_warm_up(spark, tmp_path, monkeypatch):
    from contract_gate.runners.local import LocalRunner

    warmed = []
    monkeypatch.setattr(warm_up, "load_snapshots", lambda session, tables: warmed.append(tables))
    plan = plan_for("regional_daily_cases", tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    argv = ["publish", "--plan", str(tmp_path / "plan.json"), "--submission-id", "s", "--candidate", "/c",
            "--version", "0", "--report", str(tmp_path / "no-report.json")]  # the step itself then fails

    monkeypatch.delenv(LOCAL_START_ENV, raising=False)
    assert main(argv) == 1 and warmed == []
    monkeypatch.setenv(LOCAL_START_ENV, LocalRunner().environment()[LOCAL_START_ENV])
    assert main(argv) == 1 and warmed == [[(Address.of(plan["tables"]["target"]), None), ("/c", 0)]]


def test_a_step_that_cannot_name_its_tables_fails_with_its_own_error(tmp_path, caplog, monkeypatch):
    monkeypatch.setenv(LOCAL_START_ENV, "1")
    missing = tmp_path / "no-plan.json"
    code = main(["publish", "--plan", str(missing), "--submission-id", "s", "--candidate", "/c", "--version", "0",
                 "--report", str(tmp_path / "r.json")])
    assert code == 1
    assert "gate_job publish failed" in caplog.text and "no-plan.json" in caplog.text
