"""What every decision store does, whatever holds the table: keep exactly one final record.

Delta has no unique constraint, so "one final record per submission" is a MERGE that inserts
only when no final record for the submission matches, retried when a concurrent writer wins
(its record is then seen by the retry). The match conditions below are plain SQL that both
the ``deltalake`` engine (DataFusion) and Databricks SQL run unchanged:

* a final record is inserted unless the submission already has one; a final record written
  by recovery (from the target's commit history, so without rule counts or run ids) is
  replaced by the gate's own final record when that arrives, so the full story wins and
  there is still one record;
* a ``failed`` record is inserted unless the submission already has a final record or a
  failed record of the same Airflow run (a cleared record task writes nothing twice).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from contract_gate.decisions.record import Decision
from spark_jobs.tagged_commit import TaggedCommit

FINAL_MATCH = "t.submission_id = s.submission_id AND t.final"
FAILED_MATCH = (
    "t.submission_id = s.submission_id AND (t.final OR t.run_id IS NOT DISTINCT FROM s.run_id)"
)
SUPERSEDE = "t.source = 'recovery' AND s.source = 'gate'"
MAX_ATTEMPTS = 10


class DecisionStore(ABC):
    """A decision table. Subclasses say how to MERGE one record and how to read records."""

    def record(self, decision: Decision) -> Decision:
        """Store ``decision``; return the record that now stands for the submission: the
        submission's final record when there is one (possibly an earlier one: writing the same
        final decision twice keeps the first), else ``decision`` itself."""
        if decision.final:
            self._merge(decision, FINAL_MATCH, SUPERSEDE)
        else:
            self._merge(decision, FAILED_MATCH, None)
        return self.final(decision.submission_id) or decision

    def final(self, submission_id: str) -> Decision | None:
        """The submission's final record, or None."""
        finals = [d for d in self.records(submission_id=submission_id) if d.final]
        return finals[0] if finals else None

    @abstractmethod
    def records(
        self, submission_id: str | None = None, contract_id: str | None = None
    ) -> list[Decision]:
        """Stored records, optionally of one submission or one contract, newest first."""

    @abstractmethod
    def _merge(self, decision: Decision, match: str, replace_when: str | None) -> None:
        """MERGE ``decision`` as source ``s`` into the table as ``t`` ON ``match``: insert when
        nothing matches, replace the match when ``replace_when`` holds."""


class TableHistory(ABC):
    """Reads a gated table's commit history and statistics without Spark (for recovery)."""

    @abstractmethod
    def tagged_commits(self, address: dict) -> list[TaggedCommit]:
        """Commits carrying a submission id, oldest first ([] when the table does not exist)."""

    @abstractmethod
    def max_value(self, address: dict, version: int, column: str) -> str | None:
        """max(``column``) of the table at ``version`` as ISO text, or None when unknown."""

    @abstractmethod
    def row_count(self, address: dict, version: int) -> int | None:
        """Rows of the table at ``version``, or None when the table or version is gone."""
