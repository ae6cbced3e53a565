"""One commit of a gated table that carries a submission id, as both sides read it.

The Spark side (``contract_gate_spark.steps.history``, through ``DESCRIBE HISTORY``) and the Airflow side
(``contract_gate.decisions``, through ``deltalake`` or Databricks SQL) read the same commits;
this one definition says what such a commit tells about the submission. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class TaggedCommit:
    """A commit whose ``userMetadata`` names a submission: version, time, operation, metrics."""

    version: int
    timestamp: datetime
    operation: str
    submission_id: str
    metrics: dict[str, str]

    def rows_written(self) -> int:
        """Rows the commit added or replaced (appends, MERGE inserts + updates)."""
        if self.operation == "MERGE":
            return int(self.metrics.get("numTargetRowsInserted", 0)) + int(
                self.metrics.get("numTargetRowsUpdated", 0)
            )
        return int(self.metrics.get("numOutputRows", 0))
