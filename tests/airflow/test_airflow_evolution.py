"""A contract that changes, end to end through its generated DAG (``dag.test()`` over Spark Connect, Delta):
the two common harmless edits (a nullable column, a currency added to a list) migrate the target
once, before the next batch publishes, and the migration is a decision of its own; a removed
column is refused with the differences; the same change as a new major version with
``evolution.breaking: newTarget`` publishes to a new table and leaves the old one untouched; a
publish killed (SIGKILL) after it migrated and before its batch is finished by the next run on the
same table, and its migration recorded once."""

from __future__ import annotations

import copy
import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from _airflow_gate import REPO, gate_home, order_rows

sys.path.insert(0, str(REPO / "tests" / "gate_steps"))
from _migrate_once import migrate_and_kill  # noqa: E402 - the step tests' child, killed after it migrates

CONTRACT = "evolving_orders"
KILLED = "evolving_orders_killed"  # the migration killed half-way: tables of its own
SPLIT = "evolving_split_orders"  # split batches before and after a migration: tables of its own
TARGET = f"lakehouse/{CONTRACT}"
pytestmark = pytest.mark.usefixtures("gates_over_connect")


def write_contract(gate, version: str, *, coupon: bool = False, yen: bool = False, drop: str | None = None,
                   contract_id: str = CONTRACT, **evolution) -> Path:
    """The orders example as contract ``contract_id`` (tables of its own) at ``version``."""
    document = yaml.safe_load((REPO / "contracts" / "orders.yaml").read_text(encoding="utf-8"))
    document.update(id=contract_id, version=version)
    document["schema"][0]["name"] = contract_id
    document["slaProperties"][0]["element"] = f"{contract_id}.order_timestamp"
    properties = document["schema"][0]["properties"]
    if coupon:
        properties.insert(4, {"name": "coupon", "physicalType": "string", "logicalType": "string"})
    if yen:
        check = next(p for p in properties if p["name"] == "currency")["quality"][0]["implementation"]["check"]
        check["arguments"]["allowed"].append("'JPY'")
    if drop:
        properties[:] = [p for p in properties if p["name"] != drop]
    gate_settings = next(c for c in document["customProperties"] if c["property"] == "contractGate")["value"]
    gate_settings["landing"]["path"] = f"landing/{contract_id}"
    if evolution:
        gate_settings["evolution"] = copy.deepcopy(evolution)
    path = gate.contracts / f"{contract_id}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    from contract_gate.dag_factory import sync_dag_files

    sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
    gate.reset_bag()  # the next run parses the contract as it is now
    return path


def decision_records(path: Path, contract_id: str = CONTRACT) -> list:
    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan

    with gate_home():
        plan = compile_plan(str(path))
        return decisions.store_for(plan).records(contract_id=contract_id)


@pytest.fixture
def evolving(gate):
    """The session's gate world, with the ``evolving_orders`` contract and its DAG removed after
    the test (the other DAG tests of the world count its DAGs)."""
    try:
        yield gate
    finally:
        from contract_gate.dag_factory import sync_dag_files

        for contract_id in (CONTRACT, KILLED, SPLIT):
            (gate.contracts / f"{contract_id}.yaml").unlink(missing_ok=True)
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()


@pytest.mark.slow  # four DAG runs, each a Spark JVM of its own
def test_a_contract_that_changes_migrates_refuses_or_moves_to_a_new_target(evolving):
    gate = evolving
    write_contract(gate, "1.0.0")
    gate.land(CONTRACT, order_rows(start=0), "json")
    first = gate.run(CONTRACT).decision
    assert (first["outcome"], first["contract_version"]) == ("published", "1.0.0")

    # v1.1.0: a nullable column and a currency; the next batch carries both
    path = write_contract(gate, "1.1.0", coupon=True, yen=True)
    rows = [{**row, "coupon": "WELCOME" if i == 0 else None, "currency": "JPY" if i == 1 else row["currency"]}
            for i, row in enumerate(order_rows(start=10))]
    gate.land(CONTRACT, rows, "json")
    second = gate.run(CONTRACT)
    assert (second.decision["outcome"], second.decision["contract_version"]) == ("published", "1.1.0")
    migrated = [r for r in decision_records(path) if r.outcome == "migrated"]
    assert len(migrated) == 1 and not migrated[0].final
    migration = migrated[0]
    assert (migration.migration["from_version"], migration.contract_version) == ("1.0.0", "1.1.0")
    assert any("ADD COLUMNS (`coupon` string)" in s for s in migration.migration["statements"])
    assert migration.migration["submission_id"] == second.decision["submission_id"]
    assert migration.target_version_after == second.decision["target_version_before"]
    published = {row["order_id"]: row for row in gate.rows(TARGET)}
    assert published["O10"]["coupon"] == "WELCOME" and published["O11"]["currency"] == "JPY"
    assert published["O0"]["coupon"] is None  # the batch before the migration

    # v2.0.0 removes a column: refused with the differences, the target untouched
    before = (gate.version(TARGET), len(gate.rows(TARGET)))
    write_contract(gate, "2.0.0", coupon=True, yen=True, drop="customer_id")
    gate.land(CONTRACT, [{**{k: v for k, v in row.items() if k != "customer_id"}, "coupon": None}
                         for row in order_rows(start=20)], "json")
    refused = gate.run(CONTRACT)
    refused_id = refused.xcoms["submission"]["submission_id"]
    assert refused.states["publish"] == "failed"
    assert [r.outcome for r in decision_records(path) if r.submission_id == refused_id] == ["failed"]
    assert (gate.version(TARGET), len(gate.rows(TARGET))) == before

    # the same v2.0.0 with a versioned target: published to evolving_orders_v2, the old table as it was
    write_contract(gate, "2.0.0", coupon=True, yen=True, drop="customer_id", breaking="newTarget")
    moved = gate.run(CONTRACT)  # the same batch, gated again: its failed record is not final
    assert moved.decision["outcome"] == "published"
    assert sorted(row["order_id"] for row in gate.rows(f"{TARGET}_v2")) == ["O20", "O21", "O22", "O23"]
    assert "customer_id" not in gate.rows(f"{TARGET}_v2")[0]
    assert (gate.version(TARGET), len(gate.rows(TARGET))) == before
    assert len([r for r in decision_records(path) if r.outcome == "migrated"]) == 1


@pytest.mark.slow  # two DAG runs and a migration in a child process, each a Spark JVM of its own
def test_a_migration_killed_before_its_batch_is_finished_by_the_next_run_and_recorded_once(evolving, tmp_path):
    """kill -9 of the publish step after it migrated the target and before the batch commit: the
    re-run publishes onto the same table, and the migration is recorded once, from the target's
    history, by the recovery every run does (here without its 10-minute wait)."""
    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan

    gate, target = evolving, f"lakehouse/{KILLED}"
    write_contract(gate, "1.0.0", contract_id=KILLED)
    gate.land(KILLED, order_rows(start=0), "json")
    assert gate.run(KILLED).decision["outcome"] == "published"

    path = write_contract(gate, "1.1.0", coupon=True, yen=True, contract_id=KILLED)
    with gate_home():
        plan = compile_plan(path)
    (tmp_path / "plan.json").write_text(json.dumps(plan.document), encoding="utf-8")
    migrate_and_kill(tmp_path / "plan.json", tmp_path / "migrated", {"CONTRACT_GATE_HOME": str(gate.home)})
    migrated_version = gate.version(target)
    assert [r for r in decision_records(path, KILLED) if r.outcome == "migrated"] == []

    rows = [{**row, "coupon": "WELCOME" if i == 0 else None, "currency": "JPY" if i == 1 else row["currency"]}
            for i, row in enumerate(order_rows(start=10))]
    gate.land(KILLED, rows, "json")
    rerun = gate.run(KILLED).decision
    assert (rerun["outcome"], rerun["target_version_before"]) == ("published", migrated_version)
    published = {row["order_id"]: row for row in gate.rows(target)}
    assert sorted(published) == ["O0", "O1", "O10", "O11", "O12", "O13", "O2", "O3"]
    assert published["O10"]["coupon"] == "WELCOME" and published["O11"]["currency"] == "JPY"

    with gate_home():
        recovered = decisions.recover_missing_decisions(plan, min_age=timedelta(0))
        assert decisions.recover_missing_decisions(plan, min_age=timedelta(0)) == []  # once
    assert [r["outcome"] for r in recovered] == ["migrated"]
    [migration] = [r for r in decision_records(path, KILLED) if r.outcome == "migrated"]
    assert (migration.migration["from_version"], migration.contract_version) == ("1.0.0", "1.1.0")
    assert any("ADD COLUMNS (`coupon` string)" in s for s in migration.migration["statements"])


def assert_log_agrees_with_tables(path: Path, contract_id: str) -> list:
    """Every final decision of ``contract_id`` matches its tagged commits: the target's rows and
    versions, the quarantine's rows; every tagged commit has its final decision. Returns the records."""
    from contract_gate import decisions
    from contract_gate.contract.compiler import compile_plan

    with gate_home():
        plan = compile_plan(str(path))
        records = decisions.store_for(plan).records(contract_id=contract_id)
        history = decisions.history_for(plan)
        tables = plan.require_tables()
        published = {c.submission_id: c for c in history.tagged_commits(tables.require_target())}
        quarantined = {c.submission_id: c for c in history.tagged_commits(tables.require_quarantine())}
    final = {r.submission_id: r for r in records if r.final}
    assert set(published) | set(quarantined) <= set(final)  # no commit without its final decision
    for submission_id, decision in final.items():
        target, quarantine = published.get(submission_id), quarantined.get(submission_id)
        assert decision.rows_published == (target.rows_written() if target else 0), decision
        assert decision.rows_quarantined == (quarantine.rows_written() if quarantine else 0), decision
        if target is not None:
            assert (decision.target_version_before, decision.target_version_after) == (
                target.version - 1, target.version)
    for record in records:  # a failed record says what its run committed, never less
        if record.outcome == "failed":
            target = published.get(record.submission_id)
            assert record.rows_published == (target.rows_written() if target else 0), record
    return records


@pytest.mark.slow  # four DAG runs, each a Spark JVM of its own
def test_split_batches_after_a_migration_are_split_and_the_log_agrees_with_the_tables(evolving):
    """v1.1 adds an optional column: the first batch migrates the target; a later batch that
    needs a split is split (the quarantine follows the contract too), in the new shape and in
    the old one (without the optional column), and every decision matches the tables."""
    gate, target, quarantine = evolving, f"lakehouse/{SPLIT}", f"lakehouse/{SPLIT}_quarantine"
    write_contract(gate, "1.0.0", contract_id=SPLIT)
    gate.land(SPLIT, order_rows(start=0, invalid=1), "json")
    assert gate.run(SPLIT).decision["outcome"] == "split"

    path = write_contract(gate, "1.1.0", coupon=True, contract_id=SPLIT)
    gate.land(SPLIT, [{**row, "coupon": "WELCOME"} for row in order_rows(start=10)], "json")
    migrated = gate.run(SPLIT).decision
    assert (migrated["outcome"], migrated["contract_version"]) == ("published", "1.1.0")

    gate.land(SPLIT, [{**row, "coupon": None} for row in order_rows(start=20, invalid=2)], "json")
    new_shape = gate.run(SPLIT).decision
    assert (new_shape["outcome"], new_shape["rows_published"], new_shape["rows_quarantined"]) == ("split", 4, 2)
    # the old shape, from a producer that has not added the coupon key: in JSON a key no record
    # names is NULL, which the optional column allows, so the batch is split by its rules as well
    gate.land(SPLIT, order_rows(start=30, invalid=1), "json")
    old_shape = gate.run(SPLIT).decision
    assert (old_shape["outcome"], old_shape["rows_published"], old_shape["rows_quarantined"]) == ("split", 4, 1)

    records = assert_log_agrees_with_tables(path, SPLIT)
    assert [r.outcome for r in records if r.outcome == "failed"] == []
    quarantined = {row["order_id"]: row for row in gate.rows(quarantine)}
    assert sorted(quarantined) == ["X0", "X20", "X21", "X30"]
    assert quarantined["X20"]["coupon"] is None and quarantined["X30"]["_contract_version"] == "1.1.0"
    assert quarantined["X0"]["coupon"] is None and quarantined["X0"]["_contract_version"] == "1.0.0"
    assert len(gate.rows(target)) == 16
