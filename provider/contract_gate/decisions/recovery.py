"""Recovery: a submission whose effect is in a gated table but whose decision never got written.

Delta has no multi-table transaction: a run can publish (or quarantine) and die before its
record. The commits carry the submission id (``userMetadata``), so the target's and the
quarantine table's histories say which submissions took effect; any of those without a final
record gets one, written from what the history shows:

* in the target and the quarantine table: ``split``; in the target only: ``published``;
  in the quarantine table only: ``quarantined``;
* target versions before/after, rows published/quarantined from the commits' metrics, the
  candidate's address (file landing: it is named after the submission), and as latest
  business date the freshness column's maximum in the target at the publish's version;
* ``source = "recovery"``: no rule counts or run ids (they died with the run). If the gate
  itself records the submission later, its full record replaces this one (see ``store``).

A migration of the target (``contract_gate_plan.migration``) that a run applied and died before
recording is found the same way: its intent's commits in the target's history
(``finished_migrations``), without a ``migrated`` record of its id, get one, its statements
rebuilt from the intent and its consumers from the plan when the plan is the one it migrated to.

Commits younger than ``min_age`` are left alone: their own run is most likely still about to
record them, and a split whose quarantine half is still running would be misread.

A contract that splits batches by row (``split_rows``) publishes the valid rows first and
quarantines the invalid ones next, so a run that died between the two leaves a target commit
that looks like a full publish. For a file landing the candidate (written once, version 0)
tells them apart: a publish that wrote fewer rows than the candidate holds is a split whose
quarantine half is missing. Recording it as ``published`` would be false and would make the
gate skip the batch for good, so it gets no final decision: it is logged, and re-triggering
the same batch completes it (the publish is found done, the invalid rows are quarantined, and
the gate records ``split``). A Delta landing pins a version of the producer's table that the
history does not name, so there the commit is recorded as a publish.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Any

from contract_gate.decisions.record import MIGRATED, Decision, ObjectScope
from contract_gate.decisions.store import DecisionStore, TableHistory
from contract_gate_plan.migration import FinishedMigration, finished_migrations
from contract_gate_plan.model import Plan
from contract_gate_plan.table_ddl import target_reference
from contract_gate_plan.tagged_commit import TaggedCommit

DEFAULT_MIN_AGE = timedelta(minutes=10)
LOGGER = logging.getLogger("contract_gate.recovery")


def recover_missing_decisions(
    plan: Plan,
    store: DecisionStore,
    history: TableHistory,
    *,
    min_age: timedelta = DEFAULT_MIN_AGE,
    now: datetime | None = None,
) -> list[Decision]:
    """Write the missing final decisions of ``plan``'s contract, and the missing records of its
    target's migrations; return the records written."""
    now = now or datetime.now(timezone.utc)
    tables = plan.require_tables()
    target = tables.require_target()
    published = {c.submission_id: c for c in history.tagged_commits(target)}
    quarantined = {c.submission_id: c for c in history.tagged_commits(tables.require_quarantine())}
    scope = ObjectScope.of(plan)
    records = store.records(contract_id=plan.contract_id, scope=scope)
    decided = {d.submission_id for d in records if d.final}
    recorded = {d.submission_id for d in records if d.outcome == MIGRATED}
    recovered = [store.record(_migration_decision(plan, migration, now), scope)
                 for migration in finished_migrations(history.commits(target))
                 if migration.id not in recorded and now - migration.finished_at >= min_age]
    for submission_id in sorted((set(published) | set(quarantined)) - decided):
        commits = [c for c in (published.get(submission_id), quarantined.get(submission_id)) if c]
        if now - max(c.timestamp for c in commits) < min_age:
            continue
        if quarantined.get(submission_id) is None and _split_half_done(plan, submission_id,
                                                                       published[submission_id], history):
            LOGGER.warning(
                "submission %s: its valid rows were published (target version %s) but its invalid rows were "
                "never quarantined; left without a decision: trigger the same batch again to complete the split",
                submission_id, published[submission_id].version)
            continue
        decision = _decision(plan, submission_id, published.get(submission_id),
                             quarantined.get(submission_id), history, now)
        recovered.append(store.record(decision, scope))
    return recovered


def _migration_decision(plan: Plan, migration: FinishedMigration, now: datetime) -> Decision:
    intent = migration.intent
    ours = intent["fingerprint"] == plan.fingerprint  # the plan that migrated: its consumers are the ones broken
    statements = migration.statements(target_reference(plan, plan.require_tables().require_target()))
    consumers = list((plan.gate.get("evolution") or {}).get("consumers") or []) if ours and intent.get("breaking") else []
    return Decision(
        submission_id=migration.id,
        contract_id=plan.contract_id,
        contract_version=intent["to"],
        plan_fingerprint=intent["fingerprint"],
        object=plan.object,
        outcome=MIGRATED,
        reason=(f"target migrated from contract version {intent['from'] or 'unknown'} to {intent['to']} "
                f"({len(statements)} statements); recovered from the commit history (target versions "
                f"{migration.version_before + 1} to {migration.version_after}): the run that migrated it did not "
                "record it"),
        target_version_before=migration.version_before,
        target_version_after=migration.version_after,
        migration={"from_version": intent["from"], "statements": statements, "breaking": intent.get("breaking", []),
                   "consumers": consumers, "submission_id": None},
        source="recovery",
        decided_at=now,
    )


def _split_half_done(plan: Plan, submission_id: str, target: TaggedCommit, history: TableHistory) -> bool:
    """Whether ``target`` is the first half of a split (see the module doc)."""
    if plan.violation_policy != "split_rows" or not _file_landing(plan):
        return False
    staged = history.row_count(plan.candidate(submission_id), 0)
    return staged is not None and staged > target.rows_written()


def _file_landing(plan: Plan) -> bool:
    landing = plan.require_tables().landing
    return landing is not None and landing.format != "delta"


def _decision(
    plan: Plan,
    submission_id: str,
    target: TaggedCommit | None,
    quarantine: TaggedCommit | None,
    history: TableHistory,
    now: datetime,
) -> Decision:
    outcome = "split" if target and quarantine else "published" if target else "quarantined"
    where = [f"target version {target.version}" if target else None,
             f"quarantine version {quarantine.version}" if quarantine else None]
    freshness = plan.freshness
    latest = None
    if target is not None and freshness:
        latest = history.max_value(plan.require_tables().require_target(), target.version, freshness.column)
    file_landing = _file_landing(plan)
    return Decision(
        submission_id=submission_id,
        contract_id=plan.contract_id,
        contract_version=plan.contract_version,
        object=plan.object,
        outcome=outcome,
        reason=(f"recovered from the commit history ({', '.join(w for w in where if w)}): the run"
                " that made the commit did not record its decision"),
        candidate=plan.candidate(submission_id).location if file_landing else None,
        candidate_version=0 if file_landing else None,
        rows_published=target.rows_written() if target else 0,
        rows_quarantined=quarantine.rows_written() if quarantine else 0,
        target_version_before=target.version - 1 if target else None,
        target_version_after=target.version if target else None,
        latest_business_date=latest,
        source="recovery",
        decided_at=now,
    )


def committed_effects(plan: Plan, submission_id: str, history: TableHistory) -> tuple[dict[str, Any], str | None]:
    """What the tables hold of a submission whose run failed before its verdict: the record's
    row counts and target versions as its tagged commits say (a run can fail after a commit, a
    split between its two), and a sentence for the record's reason (None: nothing committed).
    The failed record stays not final, so the same batch can be gated again: Delta skips the
    commits already made and the run completes the rest."""
    tables = plan.require_tables()
    target = next((c for c in history.tagged_commits(tables.require_target()) if c.submission_id == submission_id), None)
    quarantine = next((c for c in history.tagged_commits(tables.require_quarantine())
                       if c.submission_id == submission_id), None)
    fields: dict[str, Any] = {"rows_published": target.rows_written() if target else 0,
                              "rows_quarantined": quarantine.rows_written() if quarantine else 0}
    if target is not None:
        fields.update(target_version_before=target.version - 1, target_version_after=target.version)
    where = [f"{fields['rows_published']} rows to the target (version {target.version})" if target else None,
             f"{fields['rows_quarantined']} rows to the quarantine (version {quarantine.version})" if quarantine else None]
    committed = [w for w in where if w]
    note = (f"it committed {' and '.join(committed)} before it failed; trigger the same batch again to finish it"
            if committed else None)
    return fields, note
