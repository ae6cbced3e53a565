"""The decision record: what the gate decided about one submission, and why, without data values.

One table holds every contract's decisions (docs/architecture.md, "The decision log"). A
submission gets exactly one *final* record — ``published``, ``split`` (valid rows published,
invalid rows quarantined) or ``quarantined`` — and may also have ``failed`` records, one per
Airflow run that broke before a verdict (not final: the same batch can be gated again). Rule
results are reduced to counts: ``rule_failures`` maps a rule id to its failing rows,
``failed_rules`` lists every rule that did not pass (dataset and query rules too, which count no
rows). A rule's measured value is left out on purpose: a ``type: sql`` rule may measure a data
value.

A record names the schema object it gates (``object``): a contract of several objects keeps one
decision per object and submission. Records written before the column existed read back with
``object`` NULL; they are the decisions of the contract's only object (``ObjectScope``).

The publish step may first migrate the target to the plan's contract version
(``contract_gate_plan.migration``): that is recorded as a decision of its own, outcome ``migrated``
(kind migration, never final: it is no submission's verdict), one per migration, whose
``submission_id`` names the migration (``migration_id``) and whose ``migration`` holds
``from_version``, the statements, and the consumers a breaking migration was allowed to break;
``contract_version`` is the version migrated to, the target versions those around it.

History rules (``contract_gate_plan.batch_history``) compare a batch with the last accepted ones
of its object: their row counts are ``rows_landed``, and ``null_counts`` keeps, by rule id, the
null rows each ``nullValues`` history rule counted in the batch (a count, never a value). Records
written before the column existed read back with ``null_counts`` empty: they hold no null history.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract_gate_plan.model import Plan

FINAL_OUTCOMES = frozenset({"published", "split", "quarantined"})
PUBLISHED_OUTCOMES = frozenset({"published", "split"})
MIGRATED = "migrated"
OUTCOMES = FINAL_OUTCOMES | {"failed", MIGRATED}
SOURCES = ("gate", "recovery")

COLUMNS: tuple[tuple[str, str, bool], ...] = (
    # (name, SQL type, nullable): the one schema both stores create
    ("submission_id", "STRING", False),
    ("contract_id", "STRING", False),
    ("contract_version", "STRING", False),
    ("plan_fingerprint", "STRING", True),
    ("outcome", "STRING", False),
    ("final", "BOOLEAN", False),
    ("reason", "STRING", True),
    ("validation_outcome", "STRING", True),
    ("candidate", "STRING", True),
    ("candidate_version", "BIGINT", True),
    ("rule_failures", "MAP<STRING,BIGINT>", True),
    ("failed_rules", "ARRAY<STRING>", True),
    ("rows_landed", "BIGINT", True),
    ("rows_published", "BIGINT", True),
    ("rows_quarantined", "BIGINT", True),
    ("target_version_before", "BIGINT", True),
    ("target_version_after", "BIGINT", True),
    ("latest_business_date", "STRING", True),
    ("rerun_of", "STRING", True),
    ("correction", "BOOLEAN", True),
    ("dag_id", "STRING", True),
    ("run_id", "STRING", True),
    ("try_number", "INT", True),
    ("report_path", "STRING", True),
    ("source", "STRING", False),
    ("decided_at", "TIMESTAMP", False),
    # added later: a store adds it to an older table on its first write (so it comes last there too)
    ("object", "STRING", True),
    # a migration record's from_version, statements and broken consumers, as JSON text
    ("migration", "STRING", True),
    # the null rows each history rule of nullValues counted (by rule id): the history of later batches
    ("null_counts", "MAP<STRING,BIGINT>", True),
)


@dataclass(frozen=True)
class ObjectScope:
    """Which records are one gated object's: those naming it and, for the contract's only object,
    also those written before records named their object (``object`` NULL)."""

    name: str
    sole: bool

    @classmethod
    def of(cls, plan: Plan) -> ObjectScope:
        """The scope of ``plan``'s object. A contract of one object names its gate like its DAG
        (``contract_gate_plan.names``)."""
        return cls(plan.object, sole=plan.names.sole)

    def holds(self, value: str | None) -> bool:
        return value == self.name or (self.sole and value is None)

    def condition(self, column: str, literal: Callable[[str], str]) -> str:
        """SQL: ``column`` (an identifier, maybe qualified) holds a record of this object."""
        named = f"{column} = {literal(self.name)}"
        return f"({column} IS NULL OR {named})" if self.sole else named


@dataclass(frozen=True)
class Decision:
    """One decision record; see the module docs. ``latest_business_date`` is ISO 8601 text
    (``2024-03-01`` or ``2024-03-01T10:00:00+00:00``), as publish reports it."""

    submission_id: str
    contract_id: str
    contract_version: str
    outcome: str
    plan_fingerprint: str | None = None
    reason: str | None = None
    validation_outcome: str | None = None
    candidate: str | None = None
    candidate_version: int | None = None
    rule_failures: dict[str, int] = field(default_factory=dict)
    failed_rules: list[str] = field(default_factory=list)
    rows_landed: int | None = None
    rows_published: int | None = None
    rows_quarantined: int | None = None
    target_version_before: int | None = None
    target_version_after: int | None = None
    latest_business_date: str | None = None
    rerun_of: str | None = None
    correction: bool | None = None
    dag_id: str | None = None
    run_id: str | None = None
    try_number: int | None = None
    report_path: str | None = None
    source: str = "gate"
    decided_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    object: str | None = None  # the schema object; None on records older than the column
    migration: dict[str, Any] | None = None  # outcome ``migrated`` only: see the module docs
    null_counts: dict[str, int] = field(default_factory=dict)  # by history rule id: see the module docs

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of {', '.join(sorted(OUTCOMES))}")
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {', '.join(SOURCES)}")
        if not self.submission_id:
            raise ValueError("a decision needs a submission_id")
        if (self.outcome == MIGRATED) != (self.migration is not None):
            raise ValueError("a migration record, and only one, carries its migration")
        if self.decided_at.tzinfo is None:
            raise ValueError("decided_at must be timezone-aware")
        for name, counts in (("rule_failures", self.rule_failures), ("null_counts", self.null_counts)):
            bad = {rule: n for rule, n in counts.items() if not isinstance(n, int) or n < 0}
            if bad:
                raise ValueError(f"{name} must be row counts, got {bad}")

    @property
    def final(self) -> bool:
        return self.outcome in FINAL_OUTCOMES

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Decision:
        """Build from the dict the record task assembles. Besides the field names it accepts
        ``rules`` (report-style entries ``{id, failed_rows, ...}``: only ids and counts are
        kept) and ``candidate`` as ``{"candidate": Address, "version": n}`` or an Address.
        Unknown keys are an error, so a misspelt field is never silently dropped."""
        record = dict(record)
        for rule in record.pop("rules", None) or []:
            record.setdefault("failed_rules", []).append(rule["id"])
            if rule.get("failed_rows") is not None:
                record.setdefault("rule_failures", {})[rule["id"]] = int(rule["failed_rows"])
        candidate = record.get("candidate")
        if isinstance(candidate, dict):
            if "candidate" in candidate:  # a stage result
                record.setdefault("candidate_version", candidate.get("version"))
                candidate = candidate["candidate"]
            record["candidate"] = candidate.get("path") or candidate.get("name")
        if isinstance(record.get("decided_at"), str):
            record["decided_at"] = datetime.fromisoformat(record["decided_at"])
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(record) - known)
        if unknown:
            raise ValueError(f"unknown decision fields: {', '.join(unknown)}")
        return cls(**record)

    def as_row(self) -> dict[str, Any]:
        """The table row: every column of ``COLUMNS``, ``final`` included."""
        row = asdict(self)
        row["final"] = self.final
        row["migration"] = None if self.migration is None else json.dumps(self.migration, sort_keys=True)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Decision:
        """From a stored row (a map may come back as a dict or as key/value pairs)."""
        values: dict[str, Any] = {f.name: row.get(f.name) for f in fields(cls)}  # typed by the table
        for counts in ("rule_failures", "null_counts"):
            values[counts] = {k: int(v) for k, v in dict(values[counts] or {}).items()}
        values["failed_rules"] = list(values["failed_rules"] or [])
        if isinstance(values["migration"], str):
            values["migration"] = json.loads(values["migration"])
        decided = values["decided_at"]
        if isinstance(decided, str):
            decided = datetime.fromisoformat(decided)
        values["decided_at"] = decided if decided.tzinfo else decided.replace(tzinfo=timezone.utc)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe (XCom, CLI): the row with ``decided_at`` as ISO text."""
        row = self.as_row()
        row["decided_at"] = self.decided_at.isoformat()
        row["migration"] = self.migration
        return row
