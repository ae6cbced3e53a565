"""Turn measurements into the versioned report (docs/architecture.md, "The report").

The report is what every later step branches on and what a producer reads, so it holds
counts and rule ids only. The single exception is an opt-in sample of failing values, kept
to columns the contract marks ``sample_allowed`` and does not classify. A ``type: sql`` query
that returns something other than a number is reported by the type of its result, and a
query that fails by Spark's error condition (``CAST_INVALID_INPUT``): Spark's own messages
may quote the data.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from contract_gate_spark.validation.candidate import Candidate
from contract_gate_plan.model import Plan, Rule
from contract_gate_plan.restricted import write_private_text
from contract_gate_spark.validation.history_rules import judge_history
from contract_gate_spark.validation.schema_compare import SchemaResult
from contract_gate_plan.sql_allowlist import query_columns, query_counts
from contract_gate_plan.states import Outcome, RuleStatus
from contract_gate_plan.thresholds import percent

REPORT_VERSION = 1
LOGGER = logging.getLogger("contract_gate.validation")


@dataclass
class Measurement:
    """What the engine counted for one rule (``value`` for ``row_count``/``sql``: a number, or
    None with ``value_type`` saying what a query returned instead, never the value itself)."""

    failed_rows: int | None = None
    evaluated_rows: int | None = None
    value: int | float | Decimal | None = None
    value_type: str | None = None
    duplicate_groups: int | None = None
    sample: dict[str, list[Any]] = field(default_factory=dict)


def build_report(
    *,
    plan: Plan,
    candidate: Candidate,
    schema: SchemaResult,
    measurements: dict[str, Measurement],
    skipped: dict[str, tuple[RuleStatus, str]],
    row_count: int | None,
    invalid_rows: int | None,
    depth: str,
    submission_id: str | None,
    timings: dict[str, float],
    history: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The report dict; ``skipped`` maps rule ids to (status, reason) for rules not run;
    ``history``: the accepted batches of each history rule, where the gate handed them in."""
    rules = [
        _rule_entry(rule, measurements.get(rule.id), skipped.get(rule.id))
        for rule in plan.rules
    ]
    for entry, rule in zip(rules, plan.rules):
        _withhold_read_values(entry, rule, plan)
        judge_history(entry, rule, None if history is None else history.get(rule.id, []))
    return {
        "report_version": REPORT_VERSION,
        "contract": {"id": plan.contract_id, "version": plan.contract_version},
        "plan_fingerprint": plan.fingerprint,
        "submission_id": submission_id,
        "environment": plan.environment,
        "depth": depth,
        "candidate": {
            "table": candidate.table,
            "version": candidate.version,
            "format": candidate.format,
            "row_count": row_count,
        },
        "schema": schema.as_report(),
        # the property name of each column whose physicalName differs (rule ids use the property name)
        **({"column_names": plan.column_labels} if plan.column_labels else {}),
        "rules": rules,
        "outcome": outcome(schema.ok, rules, depth),
        "rows": {
            "valid": None if row_count is None or invalid_rows is None else row_count - invalid_rows,
            "invalid": invalid_rows,
        },
        "timings": {name: round(seconds, 3) for name, seconds in timings.items()},
    }


def outcome(schema_ok: bool, rules: list[dict[str, Any]], depth: str) -> Outcome:
    """``stopped`` (no verdict) when a rule's evaluation was stopped; else ``fail`` on a schema
    error (unless depth=data) or a failed error rule; ``warn`` on a failed warning; else ``pass``.
    A rule that could not be evaluated never counts as passed (only depth=schema skips rules on
    purpose)."""
    if any(r["status"] == RuleStatus.STOPPED for r in rules):
        return Outcome.STOPPED
    if (depth != "data" and not schema_ok) or any(
        counts_as_failed(r, depth) for r in rules if r["severity"] == "error"
    ):
        return Outcome.FAIL
    if any(counts_as_failed(r, depth) for r in rules if r["severity"] == "warning"):
        return Outcome.WARN
    return Outcome.PASS


def counts_as_failed(rule: dict[str, Any], depth: str) -> bool:
    """A rule entry that fails the batch at its severity: it failed, or it could not be
    evaluated for a reason of its own (not at depth=schema, which skips rules on purpose)."""
    return rule["passed"] is False or (rule["status"] == RuleStatus.NOT_EVALUATED and depth != "schema")


def fill_measured(report: dict[str, Any], rule: Rule, measured: Measurement) -> None:
    """Judge in ``report`` a rule that a later step measured (``key.unique_across_batches``, which
    ``batch_keys`` measures against the target): its entry, which the engine left ``not_executed``,
    becomes the measured one in its place (plan order), and the outcome is recomputed."""
    index = next((i for i, entry in enumerate(report["rules"]) if entry["id"] == rule.id), None)
    if index is None:
        raise ValueError(f"the report has no entry for rule {rule.id!r}: it was not validated against this plan")
    report["rules"][index] = _rule_entry(rule, measured, None)
    report["outcome"] = outcome(report["schema"]["ok"], report["rules"], report["depth"])


def _rule_entry(
    rule: Rule, measured: Measurement | None, skipped: tuple[RuleStatus, str] | None
) -> dict[str, Any]:
    threshold = rule.threshold
    entry: dict[str, Any] = {
        "id": rule.id,
        "kind": rule.kind,
        "scope": rule.scope,
        "columns": list(rule.columns),
        "severity": rule.severity,
        "threshold": None if threshold is None else threshold.as_json(),
        "status": RuleStatus.EVALUATED,
        "failed_rows": None,
        "evaluated_rows": None,
        "measured": None,
        "passed": None,
        "reason": None,
    }
    if skipped is not None:
        entry["status"], entry["reason"] = skipped
        return entry
    assert measured is not None
    entry["failed_rows"] = measured.failed_rows
    entry["evaluated_rows"] = measured.evaluated_rows
    if measured.duplicate_groups is not None:
        entry["duplicate_groups"] = measured.duplicate_groups
    if measured.sample:
        entry["sample"] = measured.sample
    if rule.kind in ("row_count", "sql"):
        value = _number(measured.value)
        if value is None:
            entry["reason"] = f"the query returned {measured.value_type or 'no number'}, not a number"
            entry["passed"] = False
            return entry
        entry["measured"] = _json_number(value)
        if threshold is not None:
            entry["passed"] = threshold.satisfied_by(value)
        else:  # a row count alone asserts nothing; a bare query counts offending rows
            entry["passed"] = rule.kind == "row_count" or value == 0
        return entry
    failed = measured.failed_rows
    assert failed is not None  # every row, metric and key rule counts its failing rows
    counted: int | Fraction = failed
    if threshold is not None and threshold.unit == "percent":
        counted = percent(failed, measured.evaluated_rows or 0)
    entry["measured"] = _json_number(counted)
    entry["passed"] = threshold.satisfied_by(counted) if threshold else failed == 0
    return entry


def _number(value: Any) -> int | float | Fraction | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        return Fraction(value) if value.is_finite() else None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, (int, float)) else None


def _withhold_read_values(entry: dict[str, Any], rule: Rule, plan: Plan) -> None:
    """A query's number may be a value (``max(salary)``) rather than a count of rows: then it is
    left out of the report when the query reads a classified column, every column (a star beyond
    ``count(*)``, which could rename them) or a reference table, whose classification the plan
    does not know. The rule is still judged on it."""
    if rule.kind != "sql" or entry["measured"] is None:
        return
    references = sorted(plan.tables.references) if plan.tables else []
    placeholders = ["object", *references, *(["property"] if rule.columns else [])]
    query = rule.require_query()
    if query_counts(query, placeholders):
        return
    names = query_columns(query, placeholders)
    classified = {c.name.lower(): c.name for c in plan.columns if c.classification}
    if rule.columns and rule.columns[0].lower() in classified and "{property}" in names:
        names.add(rule.columns[0].lower())
    read = sorted(classified[name] for name in names & set(classified))
    if read or ("*" in names and classified):
        why = f"classified column(s) {', '.join(read)}" if read else "every column (a star), classified ones too"
    elif any("{" + alias + "}" in query for alias in references):
        why = "a reference table"
    else:
        return
    entry["measured"] = None
    entry["reason"] = f"the measured number is withheld: the query reads {why}"


def query_result(value: Any, data_type: str) -> Measurement:
    """The measurement of a query's first value: a finite number, else only what it was
    (``data_type`` is Spark's name of the result column's type)."""
    if _number(value) is not None:
        return Measurement(value=value)
    if value is None:
        return Measurement(value_type="NULL")
    if isinstance(value, float) or isinstance(value, Decimal):
        return Measurement(value_type=f"a non-finite {data_type}")
    return Measurement(value_type=f"a {data_type} value")


def _json_number(value: int | float | Fraction) -> int | float:
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    return value


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """Write the report as sorted, indented UTF-8 JSON (diffable, like the plan), owner-only: the
    ``spark_connect`` runner writes it in the worker's process, whose umask is not the job's."""
    text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    write_private_text(path, text + "\n")


def summary_record(report: dict[str, Any]) -> dict[str, Any]:
    """The one structured log record of a validation: every failing rule with its count."""
    return {
        "event": "contract_gate.validation",
        "contract_id": report["contract"]["id"],
        "contract_version": report["contract"]["version"],
        "plan_fingerprint": report["plan_fingerprint"],
        "submission_id": report["submission_id"],
        "candidate": report["candidate"]["table"],
        "candidate_version": report["candidate"]["version"],
        "outcome": report["outcome"],
        "row_count": report["candidate"]["row_count"],
        "rows_invalid": report["rows"]["invalid"],
        "schema_ok": report["schema"]["ok"],
        "schema_missing": report["schema"]["missing"],
        "schema_unexpected": report["schema"]["unexpected"],
        "schema_type_mismatches": [m["column"] for m in report["schema"]["type_mismatches"]],
        "failing_rules": [
            {
                "id": rule["id"],
                "severity": rule["severity"],
                "status": rule["status"],
                "failed_rows": rule["failed_rows"],
                "measured": rule["measured"],
            }
            for rule in report["rules"]
            if counts_as_failed(rule, report["depth"])
        ],
    }


def log_summary(report: dict[str, Any]) -> None:
    """Emit ``summary_record`` as one JSON line on the ``contract_gate.validation`` logger
    (INFO on pass, WARNING otherwise), so log search can query rules and counts."""
    level = logging.INFO if report["outcome"] == Outcome.PASS else logging.WARNING
    LOGGER.log(level, json.dumps(summary_record(report), sort_keys=True, ensure_ascii=False))
