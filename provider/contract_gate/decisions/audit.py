"""Audit: does the decision log agree with the gated tables' Delta histories?

The decision log is the system of record, and every commit the gate makes to a target or a
quarantine table carries its submission id (``userMetadata``). For one gated object this reads
both, without Spark, and names every disagreement:

* ``commit_without_decision``: a tagged commit whose submission has no final decision
  (a run that died between its commit and its record; recovery would record it). A commit that
  a ``failed`` record of the submission says it made (``recovery.committed_effects``: a split
  stopped between its two commits, a publish stopped after its commit) is no disagreement: the
  log knows of it, and the submission is ``unfinished`` until it is gated again;
* ``decision_without_commit``: a final decision that published or quarantined rows which no
  commit of the table holds;
* ``rows_differ``: a commit that wrote other rows than its decision says it published
  (target) or quarantined (quarantine), including a commit the decision says never happened;
* ``committed_twice``: a submission with more than one commit in one table;
* ``decided_twice``: a submission with more than one final decision;
* ``unfinished``: a submission whose records are all non-final (``failed``) and whose newest
  is older than ``unfinished_after``: nobody gated that batch again;
* ``migration_without_record`` / ``record_without_migration``: a migration of the target its
  history shows finished without a ``migrated`` record, or the reverse;
* ``untagged_commit``: a data-writing commit of the target that names no submission: a write
  the gate did not make;
* ``foreign_table``: the contract names as its target or quarantine a table whose ownership
  properties say it is another contract's (or no gate's): nothing of it is reconciled, and
  ``repair`` records nothing, so a hostile contract cannot claim another's commits.

Commits younger than ``settle`` are left out, as recovery leaves them: their run is most likely
about to record them. A contract whose new major version publishes to a table of its own
(``evolution.breaking: newTarget``) shares the decision table with its older versions: only the
decisions of the versions that write this plan's tables are audited against them. Decisions older
than the oldest commit a table's log still holds cannot be checked there and are left out.

``repair`` records what recovery would (``contract_gate.decisions.recovery``), each record once
(the store's MERGE keeps one final record per submission), and never writes a gated table.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone

from contract_gate.decisions import recovery
from contract_gate.decisions.record import MIGRATED, Decision, ObjectScope
from contract_gate.decisions.store import DecisionStore, TableHistory
from contract_gate_plan.addresses import Address
from contract_gate_plan.migration import finished_migrations, versioned_suffix
from contract_gate_plan.model import Plan
from contract_gate_plan.ownership import ownership_problem
from contract_gate_plan.tagged_commit import TaggedCommit

DEFAULT_UNFINISHED_AFTER = timedelta(days=1)
AUDIT_STATUS_VERSION = 1
# Operations that add or change rows. The gate makes them only tagged; creating, migrating,
# constraining and compacting a table writes no row, and retention's DELETE runs on the
# quarantine table only.
DATA_OPERATIONS = frozenset({"WRITE", "MERGE", "DELETE", "UPDATE", "STREAMING UPDATE", "CREATE TABLE AS SELECT",
                             "REPLACE TABLE AS SELECT", "CREATE OR REPLACE TABLE AS SELECT", "COPY INTO",
                             "RESTORE", "TRUNCATE"})
REPAIRABLE = frozenset({"commit_without_decision", "migration_without_record"})


@dataclass(frozen=True)
class Finding:
    """One disagreement between the decision log and a table's history."""

    kind: str
    contract_id: str
    object: str
    table: str  # the table's location
    submission_id: str | None
    version: int | None  # the commit's version, when one is concerned
    message: str

    @property
    def repairable(self) -> bool:
        """Whether ``repair`` (recording what recovery would) settles it."""
        return self.kind in REPAIRABLE

    def as_dict(self) -> dict:
        return {**asdict(self), "repairable": self.repairable}


@dataclass(frozen=True)
class AuditResult:
    contract_id: str
    object: str
    decisions: int  # final decisions audited
    commits: int  # tagged commits audited
    findings: tuple[Finding, ...]
    repaired: tuple[Decision, ...] = ()

    def as_dict(self) -> dict:
        return {"contract_id": self.contract_id, "object": self.object, "decisions": self.decisions,
                "commits": self.commits, "findings": [f.as_dict() for f in self.findings],
                "repaired": [{"submission_id": d.submission_id, "outcome": d.outcome} for d in self.repaired]}

    def status(self, gate: str, checked_at: datetime) -> dict:
        """What the retention DAG's audit task keeps of this audit for the status page: clean or
        how many disagreements of which kinds, and when. The messages stay in the task's log."""
        return {"status_version": AUDIT_STATUS_VERSION, "gate": gate, "contract_id": self.contract_id,
                "object": self.object, "checked_at": checked_at.isoformat(timespec="seconds"),
                "clean": not self.findings, "findings": len(self.findings),
                "kinds": dict(sorted(Counter(f.kind for f in self.findings).items())),
                "decisions": self.decisions, "commits": self.commits}


def audit(
    plan: Plan,
    store: DecisionStore,
    history: TableHistory,
    *,
    settle: timedelta = recovery.DEFAULT_MIN_AGE,
    unfinished_after: timedelta = DEFAULT_UNFINISHED_AFTER,
    now: datetime | None = None,
) -> AuditResult:
    """Every disagreement between ``plan``'s object's decisions and its target's and quarantine's histories."""
    now = now or datetime.now(timezone.utc)
    tables = plan.require_tables()
    target, quarantine = tables.require_target(), tables.require_quarantine()
    records = [d for d in store.records(contract_id=plan.contract_id, scope=ObjectScope.of(plan))
               if _writes_these_tables(plan, d)]
    finals: dict[str, list[Decision]] = defaultdict(list)
    failed: dict[str, list[Decision]] = defaultdict(list)
    for decision in records:
        (finals if decision.final else failed)[decision.submission_id].append(decision)
    found: list[Finding] = []

    def finding(kind: str, table: Address, submission_id: str | None, version: int | None, message: str) -> None:
        found.append(Finding(kind, plan.contract_id, plan.object, table.location, submission_id, version, message))

    for submission_id, decided in sorted(finals.items()):
        if len(decided) > 1:
            finding("decided_twice", target, submission_id, None,
                    f"submission {submission_id} has {len(decided)} final decisions "
                    f"({', '.join(d.outcome for d in decided)})")
    foreign = {role for table, role in ((target, "target"), (quarantine, "quarantine"))
               if _not_ours(plan, history, table, role, finding)}
    if foreign:
        return AuditResult(plan.contract_id, plan.object, 0, 0, tuple(found))
    tagged = 0
    target_commits = history.commits(target)
    for table, role, field in ((target, "target", "rows_published"), (quarantine, "quarantine", "rows_quarantined")):
        commits = history.tagged_commits(table)
        tagged += len(commits)
        by_submission: dict[str, list[TaggedCommit]] = defaultdict(list)
        for commit in commits:
            by_submission[commit.submission_id].append(commit)
        for submission_id, made in sorted(by_submission.items()):
            if len(made) > 1:
                finding("committed_twice", table, submission_id, made[1].version,
                        f"submission {submission_id} committed {len(made)} times to the {role} "
                        f"(versions {', '.join(str(c.version) for c in made)})")
            settled = [c for c in made if now - c.timestamp >= settle]
            if submission_id not in finals:
                for commit in settled[:1]:
                    if _said_committed(failed[submission_id], role, commit):
                        continue
                    finding("commit_without_decision", table, submission_id, commit.version,
                            f"{role} version {commit.version} ({commit.operation}, {commit.rows_written()} rows) "
                            f"was committed by submission {submission_id}, which has no final decision")
        oldest = _oldest_held(history, table, target_commits if table is target else None)
        for submission_id, decided in sorted(finals.items()):
            decision = decided[0]
            expected = getattr(decision, field) or 0
            made = by_submission.get(submission_id, [])
            if not made:
                if expected and (oldest is None or decision.decided_at >= oldest):
                    finding("decision_without_commit", table, submission_id, None,
                            f"submission {submission_id} is {decision.outcome} with {field} {expected}, but no "
                            f"{role} commit carries it")
                continue
            written = made[0].rows_written()
            if written != expected:
                finding("rows_differ", table, submission_id, made[0].version,
                        f"{role} version {made[0].version} wrote {written} rows for submission {submission_id}; "
                        f"its decision ({decision.outcome}) says {field} {expected}")
    _unfinished(plan, records, finals, now, unfinished_after, target, finding)
    _migrations(records, target_commits, now, settle, target, finding)
    tagged_versions = {c.version for c in history.tagged_commits(target)}
    for entry in target_commits:
        if entry.operation in DATA_OPERATIONS and entry.version not in tagged_versions:
            finding("untagged_commit", target, None, entry.version,
                    f"target version {entry.version} ({entry.operation}) names no submission: "
                    "a write the gate did not make")
    return AuditResult(plan.contract_id, plan.object, sum(len(d) for d in finals.values()), tagged, tuple(found))


def repair(plan: Plan, store: DecisionStore, history: TableHistory, *, settle: timedelta = recovery.DEFAULT_MIN_AGE,
           unfinished_after: timedelta = DEFAULT_UNFINISHED_AFTER, now: datetime | None = None) -> AuditResult:
    """Record what recovery would (nothing when there is nothing to recover), then audit again.
    Nothing is recorded for a contract whose tables are not its own."""
    now = now or datetime.now(timezone.utc)
    first = audit(plan, store, history, settle=settle, unfinished_after=unfinished_after, now=now)
    if any(finding.kind == "foreign_table" for finding in first.findings):
        return first
    repaired = recovery.recover_missing_decisions(plan, store, history, min_age=settle, now=now)
    result = audit(plan, store, history, settle=settle, unfinished_after=unfinished_after, now=now)
    return AuditResult(result.contract_id, result.object, result.decisions, result.commits, result.findings,
                       tuple(repaired))


def _not_ours(plan: Plan, history: TableHistory, table: Address, role: str, finding) -> bool:
    """Whether ``table`` exists and its ownership properties say it is not ``plan``'s ``role``
    (a finding is added then)."""
    properties = history.properties(table)
    if not properties:  # no table yet, or a reader that does not say
        return False
    problem = ownership_problem(properties, table.location, table.sql_name, plan.contract_id, role)
    if problem is None:
        return False
    finding("foreign_table", table, None, None, f"not audited: {problem.splitlines()[0]}")
    return True


def _writes_these_tables(plan: Plan, decision: Decision) -> bool:
    """Whether ``decision``'s contract version writes ``plan``'s tables (not an older major's own ones)."""
    breaking = (plan.gate.get("evolution") or {}).get("breaking")
    return versioned_suffix(breaking, decision.contract_version) == versioned_suffix(breaking, plan.contract_version)


def _oldest_held(history: TableHistory, table: Address, commits=None) -> datetime | None:
    """When the oldest commit the table's log still holds was made, when older ones are gone
    (None: the whole history is there, or there is no table)."""
    entries = commits if commits is not None else history.commits(table)
    if not entries or entries[0].version == 0:
        return None
    return entries[0].timestamp


def _said_committed(records: list[Decision], role: str, commit: TaggedCommit) -> bool:
    """Whether a non-final record says its run made ``commit`` to the ``role`` table, with its rows
    (and, for the target, its version): what ``write_decision`` records of a run that failed after
    a commit."""
    rows = commit.rows_written()
    if role == "target":
        return any(r.target_version_after == commit.version and (r.rows_published or 0) == rows for r in records)
    return rows > 0 and any((r.rows_quarantined or 0) == rows for r in records)


def _unfinished(plan, records, finals, now, unfinished_after, target, finding) -> None:
    newest: dict[str, Decision] = {}
    for decision in records:
        if decision.final or decision.outcome == MIGRATED or decision.submission_id in finals:
            continue
        known = newest.get(decision.submission_id)
        if known is None or decision.decided_at > known.decided_at:
            newest[decision.submission_id] = decision
    for submission_id, decision in sorted(newest.items()):
        if now - decision.decided_at >= unfinished_after:
            finding("unfinished", target, submission_id, None,
                    f"submission {submission_id} has only non-final records, the newest ({decision.outcome}: "
                    f"{decision.reason or 'no reason'}) from {decision.decided_at.isoformat()}: gate the batch again")


def _migrations(records, target_commits, now, settle, target, finding) -> None:
    recorded = {d.submission_id for d in records if d.outcome == MIGRATED}
    finished = finished_migrations(target_commits)
    for migration in finished:
        if migration.id not in recorded and now - migration.finished_at >= settle:
            finding("migration_without_record", target, migration.id, migration.version_after,
                    f"the target's migration to contract version {migration.intent['to']} (versions "
                    f"{migration.version_before + 1} to {migration.version_after}) has no migrated record")
    held = {m.id for m in finished}
    oldest = target_commits[0].version if target_commits else None
    for decision in records:
        if decision.outcome == MIGRATED and decision.submission_id not in held and oldest == 0 \
                and decision.target_version_after is not None:
            finding("record_without_migration", target, decision.submission_id, decision.target_version_after,
                    f"migrated record {decision.submission_id} (to contract version {decision.contract_version}) "
                    "matches no finished migration in the target's history")
