"""Table ownership on real Delta tables: every table the gate creates says which contract owns it
and in which role, and every write step refuses a table that is not its own (contract_gate_plan.ownership).

The main case is the attack of issue 16: a second contract that names the orders consumer table as
its quarantine (or a copy of the orders contract under another id) is refused by ``lint`` over the
folder, and when its plan is run anyway, the real publish / quarantine / split / retention steps
write nothing to orders: its Delta version and rows are unchanged."""

from __future__ import annotations

import copy
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from _gate_plans import ROOT, case, cases_df, order, plan_for, table_rows, version_of, write_csv, write_json
from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions.delta_path import DeltaPathDecisionStore
from contract_gate.decisions.record import Decision
from contract_gate_plan.ownership import CONTRACT, ROLE, OwnershipError, claim_statement
from contract_gate_plan.document import read_document
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.steps.retention import cleanup
from contract_gate_spark.steps.stage import stage_candidate
from contract_gate_spark.steps.target import ensure_target

HOSTILE = ROOT / "tests" / "contracts_hostile"


def _plan(contract: Path, root: Path) -> dict:
    """A contract file's compiled plan with its tables under ``root`` (as ``plan_for`` does)."""
    plan = copy.deepcopy(compile_plan(contract).document)
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        if address["kind"] == "path":
            address["path"] = f"{root}/{address['path']}"
    return read_document(plan)


def _properties(spark, address: dict) -> dict:
    rows = spark.sql(f"SHOW TBLPROPERTIES delta.`{address['path']}`").collect()
    return {row["key"]: row["value"] for row in rows if row["key"].startswith("contract_gate.")}


def _snapshot(spark, address: dict) -> tuple:
    rows = sorted(tuple(sorted(row.asDict().items())) for row in table_rows(spark, address))
    return version_of(spark, address), rows


def _orders_gate_ran(spark, tmp_path) -> dict:
    """The orders gate has published one batch and quarantined another: both tables exist."""
    plan = plan_for("orders", tmp_path)
    write_json(tmp_path / "lakehouse/landing/orders", [order("o-1"), order("o-2", 20.0)])
    staged = stage_candidate(spark, plan, "orders-1")
    assert publish(spark, plan, "orders-1", staged["candidate"], staged["version"])["status"] == "published"
    bad = write_json(tmp_path / "lakehouse/landing/orders_bad", [order("o-9", -5.0)])
    staged = stage_candidate(spark, plan, "orders-2", landing=str(bad))
    assert quarantine(spark, plan, "orders-2", staged["candidate"], staged["version"], None)["status"] == "quarantined"
    return plan


def test_every_table_the_gate_creates_names_its_contract_and_role(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1), case("NL-UT", 1, -4)])

    staged = stage_candidate(spark, plan, "s1")
    publish(spark, plan, "s1", staged["candidate"], staged["version"], rows="valid")
    quarantine(spark, plan, "s1", staged["candidate"], staged["version"], report=None, rows="invalid")
    DeltaPathDecisionStore(plan["tables"]["decisions"]).record(Decision(
        submission_id="s1", contract_id="regional_daily_cases", contract_version="1.0.0", outcome="split",
        decided_at=datetime.now(timezone.utc)))

    contract = {CONTRACT: "regional_daily_cases"}
    assert staged["version"] == 0 and staged["row_count"] == 2  # one commit: created with its properties
    assert _properties(spark, staged["candidate"]) == {**contract, ROLE: "candidate"}
    # the target also records the contract version its schema follows (governed evolution)
    assert _properties(spark, plan["tables"]["target"]) == {**contract, ROLE: "target",
                                                            "contract_gate.schema_version": "1.0.0"}
    assert _properties(spark, plan["tables"]["quarantine"]) == {**contract, ROLE: "quarantine"}
    assert _properties(spark, plan["tables"]["decisions"]) == {ROLE: "decisions"}  # shared by every contract


@pytest.mark.slow  # 8 s or more
def test_a_contract_claiming_the_orders_quarantine_or_target_writes_nothing_to_orders(spark, tmp_path, capsys):
    """Both hostile contracts of tests/contracts_hostile/own_claims_orders_*.yaml: ``lint`` over a
    folder with orders fails, each error naming the other file; their plans, compiled and run
    through the real steps anyway, are refused before a byte reaches the orders tables."""
    from contract_gate.cli.main import main

    folder = tmp_path / "contracts"
    folder.mkdir()
    for source in (ROOT / "contracts" / "orders.yaml", HOSTILE / "own_claims_orders_quarantine.yaml",
                   HOSTILE / "own_claims_orders_target.yaml"):
        shutil.copy(source, folder)
    assert main(["lint", str(folder)]) == 1
    printed = capsys.readouterr().out
    assert f"FAIL  {folder / 'orders.yaml'}" in printed and f"FAIL  {folder / 'own_claims_orders_quarantine.yaml'}" in printed
    assert (f"customProperties[0].value.quarantine.table: the quarantine lakehouse/orders is also claimed by "
            f"{folder / 'orders.yaml'} (schema[0].name, line 19) as its target") in printed
    assert f"is also claimed by {folder / 'own_claims_orders_target.yaml'} (schema[0].name, line 22)" in printed

    orders = _orders_gate_ran(spark, tmp_path)
    target, orders_quarantine = orders["tables"]["target"], orders["tables"]["quarantine"]
    before = _snapshot(spark, target), _snapshot(spark, orders_quarantine)

    rejects = _plan(HOSTILE / "own_claims_orders_quarantine.yaml", tmp_path)
    assert rejects["tables"]["quarantine"]["path"] == target["path"]
    write_json(tmp_path / "lakehouse/landing/orders_rejects", [{"order_id": "x-1", "order_total": -1.0}])
    staged = stage_candidate(spark, rejects, "rejects-1")
    for rows in ("all", "invalid"):  # a rejected batch (five quarantine columns, mergeSchema), a split's half
        with pytest.raises(OwnershipError) as refused:
            quarantine(spark, rejects, "rejects-1", staged["candidate"], staged["version"], report=None, rows=rows)
        assert str(refused.value) == (f"refusing to write {target['path']} as the quarantine of contract "
                                      "'orders_rejects': the table belongs to contract 'orders' as its target")
    shadow = _plan(HOSTILE / "own_claims_orders_target.yaml", tmp_path)
    assert shadow["tables"]["target"] == target and shadow["tables"]["quarantine"] == orders_quarantine
    write_json(tmp_path / "lakehouse/landing/orders", [order("o-3")])
    staged = stage_candidate(spark, shadow, "shadow-1")
    for rows in ("all", "valid"):  # a publish, and the valid half of a split
        with pytest.raises(OwnershipError, match="belongs to contract 'orders' as its target"):
            publish(spark, shadow, "shadow-1", staged["candidate"], staged["version"], rows=rows)
    with pytest.raises(OwnershipError, match="belongs to contract 'orders' as its quarantine"):
        quarantine(spark, shadow, "shadow-1", staged["candidate"], staged["version"], report=None)
    with pytest.raises(OwnershipError, match="belongs to contract 'orders' as its quarantine"):
        cleanup(spark, shadow, now=datetime.now(timezone.utc) + timedelta(days=365))

    assert (_snapshot(spark, target), _snapshot(spark, orders_quarantine)) == before
    assert spark.read.format("delta").load(target["path"]).columns == [c["name"] for c in orders["columns"]]


def test_a_table_of_another_contract_is_refused_by_every_write_step(spark, tmp_path):
    """A table that says it is contract ``other``'s: target creation, publish, quarantine and
    retention all refuse it, and it is left exactly as it was."""
    plan = plan_for("regional_daily_cases", tmp_path)
    for role in ("target", "quarantine"):
        path = plan["tables"][role]["path"]
        cases_df(spark, [case("NL-NH", 1)]).write.format("delta").save(path)
        spark.sql(claim_statement(f"delta.`{path}`", "other", role))
    snapshots = {role: _snapshot(spark, plan["tables"][role]) for role in ("target", "quarantine")}
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-UT", 2, -1)])
    staged = stage_candidate(spark, plan, "s1")

    with pytest.raises(OwnershipError, match="belongs to contract 'other' as its target"):
        ensure_target(spark, plan)
    with pytest.raises(OwnershipError, match="belongs to contract 'other' as its target"):
        publish(spark, plan, "s1", staged["candidate"], staged["version"])
    corrections = plan_for("regional_daily_cases", tmp_path, publication={"mode": "replace_keys"})
    with pytest.raises(OwnershipError, match="belongs to contract 'other' as its target"):
        publish(spark, corrections, "s1", staged["candidate"], staged["version"])  # the key MERGE
    with pytest.raises(OwnershipError, match="belongs to contract 'other' as its quarantine"):
        quarantine(spark, plan, "s1", staged["candidate"], staged["version"], report=None)
    with pytest.raises(OwnershipError, match="belongs to contract 'other' as its quarantine"):
        cleanup(spark, plan, now=datetime.now(timezone.utc) + timedelta(days=365))  # DELETE + VACUUM

    assert {role: _snapshot(spark, plan["tables"][role]) for role in snapshots} == snapshots


def test_a_table_in_another_role_of_the_same_contract_is_refused(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    path = plan["tables"]["quarantine"]["path"]
    ensure_target(spark, plan, {**plan["tables"]["target"], "path": path})  # its target, where its quarantine goes
    before = _snapshot(spark, plan["tables"]["quarantine"])
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-UT", 2, -1)])
    staged = stage_candidate(spark, plan, "s1")

    with pytest.raises(OwnershipError, match="belongs to contract 'regional_daily_cases' as its target"):
        quarantine(spark, plan, "s1", staged["candidate"], staged["version"], report=None)
    assert _snapshot(spark, plan["tables"]["quarantine"]) == before


def test_a_table_without_ownership_properties_is_refused_with_the_statement_that_claims_it(spark, tmp_path):
    """The safe default for tables made before ownership properties (or by hand): refused, never
    adopted; the error carries the ALTER TABLE that hands it to the contract, and after it runs
    the same publish goes through."""
    plan = plan_for("regional_daily_cases", tmp_path)
    target = plan["tables"]["target"]
    ensure_target(spark, plan)
    spark.sql(f"ALTER TABLE delta.`{target['path']}` UNSET TBLPROPERTIES ('{CONTRACT}', '{ROLE}')")
    before = _snapshot(spark, target)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-UT", 2)])
    staged = stage_candidate(spark, plan, "s1")

    with pytest.raises(OwnershipError) as refused:
        publish(spark, plan, "s1", staged["candidate"], staged["version"])

    message = str(refused.value)
    assert "has no contract-gate ownership properties" in message
    statement = message.rsplit("\n", 1)[1].strip()
    assert statement == (f"ALTER TABLE delta.`{target['path']}` SET TBLPROPERTIES "
                         "('contract_gate.contract' = 'regional_daily_cases', 'contract_gate.role' = 'target')")
    assert _snapshot(spark, target) == before

    spark.sql(statement)
    assert publish(spark, plan, "s1", staged["candidate"], staged["version"])["status"] == "published"
    assert len(table_rows(spark, target)) == 1


def test_retention_drops_only_this_contracts_candidates(spark, tmp_path):
    """Candidates of another contract with the same dataset name, or without properties, share the
    candidate folder and the ``<object>__`` prefix: retention leaves them alone."""
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    ours = stage_candidate(spark, plan, "ours")["candidate"]
    folder = tmp_path / "lakehouse/_contract_gate_candidates"
    foreign, unowned = folder / "regional_daily_cases__foreign", folder / "regional_daily_cases__unowned"
    for path in (foreign, unowned):
        cases_df(spark, [case("NL-UT", 1)]).write.format("delta").save(str(path))
    spark.sql(claim_statement(f"delta.`{foreign}`", "someone_else", "candidate"))

    result = cleanup(spark, plan, now=datetime.now(timezone.utc) + timedelta(days=30))

    assert [path.rsplit("/", 1)[1] for path in result["candidates_dropped"]] == [Path(ours["path"]).name]
    assert foreign.exists() and unowned.exists()


def test_a_foreign_table_at_the_candidates_address_is_not_taken_for_a_retry(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    write_csv(tmp_path / "lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    squatter = tmp_path / "lakehouse/_contract_gate_candidates/regional_daily_cases__s1"
    cases_df(spark, [case("NL-UT", 1)]).write.format("delta").save(str(squatter))
    before = _snapshot(spark, {"path": str(squatter)})

    with pytest.raises(OwnershipError, match="as the candidate of contract 'regional_daily_cases'"):
        stage_candidate(spark, plan, "s1")
    assert _snapshot(spark, {"path": str(squatter)}) == before


def test_a_foreign_decision_table_is_not_written(tmp_path):
    """The path decision store (delta-rs, no Spark) checks the role property too."""
    from deltalake import write_deltalake
    import pyarrow as pa

    address = {"kind": "path", "path": str(tmp_path / "decisions"), "format": "delta"}
    write_deltalake(address["path"], pa.table({"submission_id": ["x"]}))
    decision = Decision(submission_id="s1", contract_id="orders", contract_version="1.0.0", outcome="published",
                        decided_at=datetime.now(timezone.utc))

    with pytest.raises(OwnershipError, match="as the decisions of the gate: the table has no contract-gate"):
        DeltaPathDecisionStore(address).record(decision)
