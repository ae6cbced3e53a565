"""The target's migration is a decision of its own: outcome ``migrated`` (not final), recorded once
with the two contract versions and the statements, next to the submission's own final record;
the contracts page shows it and the version each decision was made under."""

from __future__ import annotations

from _decision_writers import decisions_plan
from contract_gate import decisions
from contract_gate.decisions.delta_path import DeltaPathDecisionStore
from contract_gate.freshness.decision_log import accepted_decisions, read_decisions
from contract_gate.operators.record import migration_record
from contract_gate.pages.contracts_view import _decision_row, outcome_counts
from contract_gate.pages.data import LISTED_COLUMNS
from contract_gate_plan.model import Plan

STATEMENTS = ["ALTER TABLE delta.`/t/orders` ADD COLUMNS (`coupon` string)",
              "ALTER TABLE delta.`/t/orders` SET TBLPROPERTIES ('contract_gate.schema_version' = '1.1.0')"]
PUBLISHED = {"publish": {"status": "published", "rows": 2, "target_version_before": 7, "target_version_after": 8,
                         "migration": {"from_version": "1.0.0", "to_version": "1.1.0", "fingerprint": "ab" * 32,
                                       "statements": STATEMENTS, "breaking": [], "breaking_applied": [],
                                       "consumers": [], "target_version_before": 3, "target_version_after": 7}}}


def _plan(tmp_path) -> Plan:
    return decisions_plan(str(tmp_path / "decisions"), "orders", "1.1.0")


def _context(run_id: str) -> dict:
    return {"contract_id": "orders", "dag_id": "orders", "run_id": run_id, "try_number": 1}


def test_a_migration_is_recorded_once_beside_the_submissions_final_decision(tmp_path):
    plan = _plan(tmp_path)
    store = DeltaPathDecisionStore(plan.tables.decisions)
    migrated = migration_record({"publish": PUBLISHED}, "sub-1")

    first = decisions.record_decision(plan, {**migrated, **_context("r1")}, store)
    decisions.record_decision(plan, {**migrated, **_context("r2")}, store)  # the record task ran again
    decisions.record_decision(plan, {"submission_id": "sub-1", "outcome": "published", "contract_version": "1.1.0",
                                     "target_version_before": 7, "target_version_after": 8, **_context("r1")}, store)

    records = store.records(contract_id="orders")
    assert sorted((r.submission_id, r.outcome, r.final) for r in records) == [
        (first["submission_id"], "migrated", False), ("sub-1", "published", True)]
    migration = next(r for r in records if r.outcome == "migrated")
    assert migration.submission_id == "migration-" + "ab" * 8 + "-7"
    assert (migration.contract_version, migration.migration["from_version"]) == ("1.1.0", "1.0.0")
    assert migration.migration["statements"] == STATEMENTS and migration.migration["submission_id"] == "sub-1"
    assert (migration.target_version_before, migration.target_version_after) == (3, 7)
    assert store.final("sub-1").outcome == "published"
    assert [d["submission_id"] for d in accepted_decisions(plan)] == ["sub-1"]  # freshness ignores it


def test_a_split_publication_carries_its_migration_and_a_run_without_one_records_none():
    assert migration_record({"split": {"publish": PUBLISHED["publish"], "quarantine": {}}}, "s")["outcome"] == "migrated"
    assert migration_record({"publish": {"publish": {"status": "published"}}}, "s") is None
    assert migration_record({}, "s") is None


def test_the_contracts_page_shows_the_migration_and_each_decisions_version(tmp_path):
    plan = _plan(tmp_path)
    decisions.record_decision(plan, {**migration_record({"publish": PUBLISHED}, "sub-1"), **_context("r1")})
    decisions.record_decision(plan, {"submission_id": "sub-0", "outcome": "published", "contract_version": "1.0.0",
                                     **_context("r0"), "decided_at": "2024-03-01T00:00:00+00:00"})

    rows = read_decisions(plan.tables.decisions.location, ["orders"], LISTED_COLUMNS)["orders"]
    shown = [_decision_row({**row, "failed_rules": list(row["failed_rules"] or [])}) for row in rows]

    assert [(row["outcome"], row["version"], row["migration"]) for row in shown] == [
        ("migrated", "1.1.0", "1.0.0 → 1.1.0, 2 statements"), ("published", "1.0.0", None)]
    assert outcome_counts(rows) == {"published": 1, "split": 0, "quarantined": 0, "failed": 0}
