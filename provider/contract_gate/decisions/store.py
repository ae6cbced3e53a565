"""What every decision store does, whatever holds the table: keep exactly one final record.

Delta has no unique constraint, so "one final record per submission" is a MERGE that inserts
only when no final record for the submission matches, retried when a concurrent writer wins
(its record is then seen by the retry). The match conditions below are plain SQL that both
the ``deltalake`` engine (DataFusion) and Databricks SQL run unchanged:

* a final record is inserted unless the submission already has one; a final record written
  by recovery (from the target's commit history, so without rule counts or run ids) is
  replaced by the gate's own final record when that arrives, so the full story wins and
  there is still one record;
* a ``migrated`` record (the target's migration, ``record.MIGRATED``) is inserted unless its
  migration was recorded already;
* a ``failed`` record is inserted unless the submission already has a final record or a
  failed record of the same Airflow run (a cleared record task writes nothing twice).

Conflicts are scoped to one submission. Every condition starts with the record's
contract and submission as *literals* (``SCOPE``), rendered by the store's own literal quoting.
The table is laid out by ``contract_id`` (a partition of the path table, a clustering key of a
catalog table), so the literal contract selects one partition, and the literal submission
selects the files whose ``submission_id`` statistics can hold it. The engine keeps that
condition as the commit's read predicate; the conflict check compares only the files a
concurrent commit added that match it, so two gates recording different submissions, of the
same contract or not, do not conflict. Written as ``t.submission_id = s.submission_id`` instead,
the engine could not narrow it down and recorded ``predicate: final``: every pair of decisions
conflicted.

A contract of several objects keeps one final record per object and submission: the record
task's condition also names the object (``ObjectScope``), and so does every read of one gate's
records.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from datetime import timezone

from contract_gate.decisions.record import MIGRATED, PUBLISHED_OUTCOMES, Decision, ObjectScope
from contract_gate_plan.addresses import Address
from contract_gate_plan.migration import HistoryEntry
from contract_gate_plan.tagged_commit import TaggedCommit

LAYOUT_COLUMN = "contract_id"  # partition (path) / clustering (catalog) column of the decision table
SCOPE = "t.contract_id = {contract_id} AND t.submission_id = {submission_id}"
FINAL_MATCH = SCOPE + " AND t.final"
FAILED_MATCH = SCOPE + " AND (t.final OR t.run_id IS NOT DISTINCT FROM s.run_id)"
SUPERSEDE = "t.source = 'recovery' AND s.source = 'gate'"
# A final decision whose outcome published rows (``record.PUBLISHED_OUTCOMES``): an accepted batch.
ACCEPTED = f"final AND outcome IN ({', '.join(repr(outcome) for outcome in sorted(PUBLISHED_OUTCOMES))})"
MAX_ATTEMPTS = 10

# How long the decision table's log and removed files are kept: time travel works over this
# window; older log entries and files are deleted by the retention DAG's upkeep. The log holds
# every commit of the window plus its checkpoints, so its size grows with the window times the
# decision rate; a shorter window is the lever when the log grows too large.
RETENTION_WINDOW = "interval 2 days"


class DecisionStore(ABC):
    """A decision table. Subclasses say how to quote a string, how to MERGE one record, how to
    read records and how to keep the table small."""

    def record(self, decision: Decision, scope: ObjectScope | None = None) -> Decision:
        """Store ``decision``; return the record that now stands for the submission (of the
        object ``scope``, when given): the submission's final record when there is one (possibly
        an earlier one: writing the same final decision twice keeps the first), else ``decision``
        itself. A gate's final record that the MERGE wrote needs no read back: it stands, and
        nothing replaces a gate's record."""
        if decision.final:
            written = self._merge(decision, self.match(FINAL_MATCH, decision, scope), SUPERSEDE)
        elif decision.outcome == MIGRATED:  # its id names the migration: recorded once
            written = self._merge(decision, self.match(SCOPE, decision, scope), None)
        else:
            written = self._merge(decision, self.match(FAILED_MATCH, decision, scope), None)
        if written and decision.final and decision.source == "gate":  # as it reads back: times in UTC
            return replace(decision, decided_at=decision.decided_at.astimezone(timezone.utc))
        return self.final(decision.submission_id, decision.contract_id, scope) or decision

    def match(self, condition: str, decision: Decision, scope: ObjectScope | None = None) -> str:
        """``condition`` with the decision's contract and submission filled in as literals, and
        narrowed to ``scope``'s records."""
        matched = condition.format(contract_id=self.string_literal(decision.contract_id),
                                   submission_id=self.string_literal(decision.submission_id))
        return matched if scope is None else f"{matched} AND {scope.condition('t.object', self.string_literal)}"

    def final(self, submission_id: str, contract_id: str | None = None,
              scope: ObjectScope | None = None) -> Decision | None:
        """The submission's final record (of the object ``scope``), or None. Give ``contract_id``
        whenever it is known: only that contract's part of the table is read."""
        finals = [d for d in self.records(submission_id=submission_id, contract_id=contract_id, scope=scope)
                  if d.final]
        return finals[0] if finals else None

    @abstractmethod
    def string_literal(self, value: str) -> str:
        """``value`` as a string literal of the store's SQL dialect."""

    @abstractmethod
    def records(
        self, submission_id: str | None = None, contract_id: str | None = None, scope: ObjectScope | None = None
    ) -> list[Decision]:
        """Stored records, optionally of one submission, one contract or one object (``scope``),
        newest first."""

    @abstractmethod
    def accepted_batches(self, contract_id: str, scope: ObjectScope, limit: int) -> list[Decision]:
        """The last ``limit`` accepted batches of the contract's object ``scope`` (final
        decisions that published rows: ``published`` or ``split``), newest first: the history
        that history rules compare a batch with (``contract_gate.decisions.batch_history``)."""

    @abstractmethod
    def _merge(self, decision: Decision, match: str, replace_when: str | None) -> bool | None:
        """MERGE ``decision`` as source ``s`` into the table as ``t`` ON ``match``: insert when
        nothing matches, replace the match when ``replace_when`` holds. Returns whether the
        row was written (None: the engine does not say)."""

    @abstractmethod
    def upkeep(self, contract_id: str) -> dict:
        """The retention DAG's daily care of the table for one contract: compact its small
        files, checkpoint, drop log entries older than ``RETENTION_WINDOW``. Returns metrics."""


class TableHistory(ABC):
    """Reads a gated table's commit history and statistics without Spark (for recovery)."""

    @abstractmethod
    def tagged_commits(self, address: Address) -> list[TaggedCommit]:
        """Commits carrying a submission id, oldest first ([] when the table does not exist)."""

    @abstractmethod
    def commits(self, address: Address) -> list[HistoryEntry]:
        """Every commit the table's log still holds, oldest first ([] when the table does not
        exist): migrations are found among them (``contract_gate_plan.migration.finished_migrations``)."""

    @abstractmethod
    def max_value(self, address: Address, version: int, column: str) -> str | None:
        """max(``column``) of the table at ``version`` as ISO text, or None when unknown."""

    @abstractmethod
    def row_count(self, address: Address, version: int) -> int | None:
        """Rows of the table at ``version``, or None when the table or version is gone."""

    def properties(self, address: Address) -> dict[str, str] | None:
        """The table's properties (its ownership among them), or None when not read here (the
        catalog reader: the audit then leaves ownership to the steps that write)."""
        return None
