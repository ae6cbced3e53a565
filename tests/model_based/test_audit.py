"""``contract-gate audit`` on a lakehouse the gate wrote: clean (exit 0); after a decision record
is removed, or a foreign commit is added to the target, exit 1 naming it; ``--repair`` records
what recovery would, once, and the audit is clean again; a write that names no submission is
reported and never "repaired"; ``--json`` says the same."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess

import pyarrow as pa
import pytest
import yaml
from deltalake import CommitProperties, DeltaTable, write_deltalake

from contract_gate.cli.main import main
from contract_gate.operators.validate import summarize
from contract_gate_spark.commands import gate_job
from contract_gate_spark.steps.publish import publish
from gate_walk import GateWorld, contract_text


def audit(world: GateWorld, *args: str) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(world.root / "contracts"), "--settle", "0", *args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def split_object(result: subprocess.CompletedProcess) -> dict:
    return next(o for o in json.loads(result.stdout)["objects"] if o["object"] == "meters_split")


@pytest.mark.slow  # two gate runs on the shared Spark session
def test_audit_finds_a_removed_record_and_a_foreign_commit_and_repair_settles_them(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    world = GateWorld(tmp_path, spark, seed=5)
    contract = world.contracts["meters_split"]
    world.steps.append("setup")
    for kind in ("good", "bad"):
        rows, invalid = world.rows(kind, contract)
        world.land(contract, rows)
        world.expect(contract, world.gate(contract), rows, invalid, kind,
                     world.plan(contract).require_tables().require_target().location)
    assert world.disagreements == []
    clean = audit(world)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "meters_split): 2 final decision(s), 3 tagged commit(s): clean" in clean.stdout

    plan = world.plan(contract)
    tables = plan.require_tables()
    split = contract.last_submission
    DeltaTable(tables.require_decisions().location).delete(f"submission_id = '{split}' AND final")
    found = audit(world)
    assert found.returncode == 1
    for table in ("target", "quarantine"):  # the split's two commits, each named
        assert re.search(rf"commit_without_decision: {table} version \d+ \(\w+, \d+ rows\) was committed by "
                         rf"submission {split}, which has no final decision \(--repair records it\)", found.stdout)

    repaired = audit(world, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert f"recorded split for {split}" in repaired.stdout
    again = audit(world, "--repair", "--json")
    assert again.returncode == 0 and split_object(again)["repaired"] == []  # exactly once

    target = tables.require_target().location
    foreign = pa.table({"meter_id": ["x1", "x2"], "reading": pa.array([1, 2], pa.int64()), "kind": ["a", "a"]})
    write_deltalake(target, foreign, mode="append",
                    commit_properties=CommitProperties(custom_metadata={"userMetadata": "f0f0f0f0f0f0f0f0"}))
    tagged = audit(world, "--json")
    assert tagged.returncode == 1
    findings = split_object(tagged)["findings"]
    assert [(f["kind"], f["submission_id"], f["repairable"]) for f in findings] == [
        ("commit_without_decision", "f0f0f0f0f0f0f0f0", True)]
    assert audit(world, "--repair").returncode == 0  # recorded as recovery would: a publish from the history
    assert audit(world).returncode == 0

    write_deltalake(target, foreign, mode="append")  # names no submission: not the gate's
    untagged = audit(world, "--repair")
    assert untagged.returncode == 1
    assert re.search(r"untagged_commit: target version \d+ \(WRITE\) names no submission", untagged.stdout)


def test_a_contract_naming_another_contracts_target_is_not_audited_and_repair_claims_nothing(tmp_path, monkeypatch):
    """Hostile: a contract whose target is another contract's table (with a tagged commit no decision
    of it matches) gets a ``foreign_table`` finding, and ``--repair`` records no decision for it."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    theirs = tmp_path / "lakehouse" / "readings"
    rows = pa.table({"meter_id": ["m1"], "reading": pa.array([1], pa.int64()), "kind": ["a"]})
    write_deltalake(str(theirs), rows.slice(0, 0))
    DeltaTable(str(theirs)).alter.set_table_properties(
        {"contract_gate.contract": "urn:walk:readings", "contract_gate.role": "target"}, raise_if_not_exists=False)
    write_deltalake(str(theirs), rows, mode="append",
                    commit_properties=CommitProperties(custom_metadata={"userMetadata": "abcdefabcdefabcd"}))
    folder = tmp_path / "contracts"
    folder.mkdir()
    hostile = yaml.safe_load(contract_text("thief", "1.0.0", "append", "reject_batch"))
    next(p for p in hostile["customProperties"] if p["property"] == "contractGate")["value"]["target"] = {
        "path": "readings"}
    (folder / "thief.yaml").write_text(yaml.safe_dump(hostile), encoding="utf-8")

    for extra in ((), ("--repair",)):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["audit", str(folder), "--settle", "0", "--json", *extra])
        assert code == 1, err.getvalue()
        (audited,) = json.loads(out.getvalue())["objects"]
        assert [f["kind"] for f in audited["findings"]] == ["foreign_table"]
        assert "belongs to contract 'urn:walk:readings'" in audited["findings"][0]["message"]
        assert audited["repaired"] == []
    assert not (tmp_path / "lakehouse" / "contract_gate_decisions").exists()  # nothing recorded


@pytest.mark.slow  # a gate run and a half on the shared Spark session
def test_a_split_stopped_between_its_commits_is_unfinished_not_a_disagreement(spark, tmp_path, monkeypatch):
    """The split published its valid rows and was stopped before it quarantined the rest; its
    ``failed`` record says so. The log agrees with the tables: the audit is clean, the submission
    is ``unfinished`` once ``--unfinished-after`` has passed, ``--repair`` records nothing (no
    verdict can be made up for half a split), and gating the batch again finishes it."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    world = GateWorld(tmp_path, spark, seed=7)
    contract = world.contracts["meters_split"]
    world.steps.append("setup")
    rows, invalid = world.rows("bad", contract)
    world.land(contract, rows)
    plan = world.plan(contract)
    submission_id, landing = world.submission(plan)
    folder = world.run_folder(contract, plan, submission_id)
    common = ["--plan", str(folder / "plan.json"), "--submission-id", submission_id, "--report", str(folder / "report.json")]
    assert gate_job.main(["stage+validate+batch_keys", *common, "--landing", json.dumps(landing),
                          "--result", str(folder / "stage.json")]) == 0
    staged = json.loads((folder / "stage.json").read_text())
    report = json.loads((folder / "report.json").read_text())
    publish(spark, plan, submission_id, staged["candidate"], staged["version"], "valid", report)  # then stopped
    summary = summarize(report, folder / "report.json", staged)
    recorded = world.record(plan, {"submission_id": submission_id}, summary, {}, {"split": "failed"})
    assert (recorded["outcome"], recorded["rows_published"]) == ("failed", len(rows) - len(invalid))

    clean = audit(world)
    assert clean.returncode == 0, clean.stdout
    late = audit(world, "--unfinished-after", "0", "--json")
    assert [(f["kind"], f["submission_id"]) for f in split_object(late)["findings"]] == [("unfinished", submission_id)]
    repaired = audit(world, "--repair", "--json")
    assert repaired.returncode == 0 and split_object(repaired)["repaired"] == []

    assert world.gate(contract)["outcome"] == "split"  # the publish already made, the quarantine now
    assert audit(world, "--unfinished-after", "0").returncode == 0
