"""The report page of one submission, as plain data for the template: what the gate decided, on
which snapshot, and why, rule by rule (failing rules first).

Built from the submission's decision records and, where it is readable, the report JSON the
gate wrote. Neither holds a data value of a classified column (docs/security.md); the one kind of
value a report may hold, an opt-in sample of failing values, is shown only for columns that the
current contract still marks ``sampleAllowed`` and does not classify, and the latest business
date only when its column is not classified.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from contract_gate.decisions.record import PUBLISHED_OUTCOMES, Decision
from contract_gate_plan.model import Plan

# The quarantine table's submission column (contract_gate_spark.steps.quarantine.SUBMISSION; that module
# imports pyspark, so the name is repeated here and a test checks the two agree).
QUARANTINE_SUBMISSION_COLUMN = "_submission_id"
# Rules judged on a measured number rather than on failing rows; the report withholds the number
# when a query reads a classified column.
MEASURED_KINDS = ("row_count", "sql")
OPERATORS = {
    "mustBe": "=", "mustNotBe": "≠", "mustBeGreaterThan": ">", "mustBeGreaterOrEqualTo": "≥",
    "mustBeLessThan": "<", "mustBeLessOrEqualTo": "≤", "mustBeBetween": "between", "mustNotBeBetween": "not between",
}


def report_view(plan: Plan, contract_file: Path, submission_id: str, records: list[Decision],
                report: dict | None, reruns: list[Decision]) -> dict:
    """Everything the report page shows. ``records`` are the submission's decision records
    (newest first); the final one stands for the submission, else the newest ``failed`` one."""
    final = next((record for record in records if record.final), None)
    decision = final or (records[0] if records else None)
    contract = (report or {}).get("contract") or {"id": plan.contract_id,
                                                  "version": decision.contract_version if decision else None}
    candidate = (report or {}).get("candidate") or {}
    return {
        "submission_id": submission_id,
        "contract": {"id": contract["id"], "version": contract["version"], "name": plan.contract_name},
        "object": plan.object,
        # links to the contract's other reports name the object when the contract has several
        "object_link": None if plan.names.sole else plan.object,
        "plan_fingerprint": (report or {}).get("plan_fingerprint") or (decision.plan_fingerprint if decision else None),
        "outcome": decision.outcome if decision else None,
        "final": bool(final),
        "reason": decision.reason if decision else None,
        "validation_outcome": (report or {}).get("outcome") or (decision.validation_outcome if decision else None),
        "decided_at": decision.decided_at.isoformat(timespec="seconds") if decision else None,
        "candidate": {
            "table": candidate.get("table") or (decision.candidate if decision else None),
            "version": candidate.get("version") if candidate else (decision.candidate_version if decision else None),
            "row_count": candidate.get("row_count") if candidate else (decision.rows_landed if decision else None),
        },
        "schema": _schema(plan, report),
        "rules": rules_view(plan, report, decision),
        "rows": _rows(decision, report),
        "target": {
            "table": plan.require_tables().require_target().location,
            "version_before": decision.target_version_before if decision else None,
            "version_after": decision.target_version_after if decision else None,
            "latest_business_date": _business_date(plan, decision),
        },
        "quarantine": _quarantine(plan, submission_id),
        "chain": _chain(plan, contract_file, submission_id, decision, reruns),
        "runs": [{"outcome": r.outcome, "decided_at": r.decided_at.isoformat(timespec="seconds"), "dag_id": r.dag_id,
                  "run_id": r.run_id, "try_number": r.try_number, "reason": r.reason, "source": r.source,
                  "contract_version": r.contract_version,
                  "statements": (r.migration or {}).get("statements", []),
                  "breaks_consumers": (r.migration or {}).get("consumers", [])}
                 for r in records],
        "report_available": report is not None,
    }


def rules_view(plan: Plan, report: dict | None, decision: Decision | None) -> list[dict]:
    """Every rule with its kind, severity, threshold, failed rows and share of evaluated rows,
    failing rules first (then errors before warnings, then the plan's order). Without a report,
    the decision's failing rules with their counts."""
    if report is not None:
        entries = [_rule(plan, entry) for entry in report["rules"]]
    else:
        failures = decision.rule_failures if decision else {}
        kinds = {rule["id"]: rule for rule in plan.document["rules"]}
        entries = [{"id": rule_id, "kind": kinds.get(rule_id, {}).get("kind"),
                    "severity": kinds.get(rule_id, {}).get("severity"), "threshold": None,
                    "failed_rows": failures.get(rule_id), "evaluated_rows": None, "share": None, "measured": None,
                    "status": "evaluated", "failing": True, "reason": None, "samples": [],
                    "physical_columns": physical_columns(plan, kinds.get(rule_id, {}).get("columns") or [])}
                   for rule_id in (decision.failed_rules if decision else [])]
    order = {entry["id"]: index for index, entry in enumerate(entries)}
    return sorted(entries, key=lambda e: (not e["failing"], e["severity"] != "error", order[e["id"]]))


def _rule(plan: Plan, entry: dict) -> dict:
    failed, evaluated = entry.get("failed_rows"), entry.get("evaluated_rows")
    return {
        "id": entry["id"],
        "kind": entry["kind"],
        "severity": entry["severity"],
        "threshold": threshold_text(entry.get("threshold")),
        "failed_rows": failed,
        "evaluated_rows": evaluated,
        "share": share_text(failed, evaluated),
        "measured": entry.get("measured") if entry["kind"] in MEASURED_KINDS else None,
        "status": entry["status"],
        "physical_columns": physical_columns(plan, entry.get("columns") or []),
        "failing": failing(entry),
        "reason": entry.get("reason"),
        "samples": _samples(plan, entry.get("sample") or {}),
    }


def physical_columns(plan: Plan, columns: list[str]) -> list[dict]:
    """The rule's columns whose physicalName differs from the property name (the rule id says the
    name): each as {name, physical}."""
    labels = _labels(plan)
    return [{"name": labels[column], "physical": column} for column in columns if column in labels]


def _labels(plan: Plan) -> dict[str, str]:
    """The property name of each column whose physicalName differs from it (plan column ``label``)."""
    return plan.column_labels


def failing(entry: dict) -> bool:
    """A rule that failed, or that should have run and could not (as the validate task sums up).
    A check the gate cannot run at all (kind ``unsupported``) is listed, not evaluated, not failing."""
    if entry["kind"] == "unsupported":
        return False
    return entry["passed"] is False or entry["status"] not in ("evaluated", "not_executed")


def threshold_text(threshold: dict | None) -> str | None:
    """``< 5 %``, ``between 1 and 10 rows``: a report threshold as a reader says it."""
    if not threshold:
        return None
    operator = OPERATORS.get(threshold["operator"], threshold["operator"])
    value = threshold["value"]
    shown = f"{value[0]} and {value[1]}" if isinstance(value, list) else str(value)
    unit = threshold.get("unit") or ""
    sign = {"percent": "%", "rows": "rows"}.get(unit, unit)
    return f"{operator} {shown} {sign}".strip()


def share_text(failed: int | None, evaluated: int | None) -> str | None:
    if failed is None or not evaluated:
        return None
    share = 100 * failed / evaluated
    return f"{share:.1f} %" if share >= 0.1 or failed == 0 else f"{share:.3g} %"


def _samples(plan: Plan, sample: dict) -> list[dict]:
    """The report's failing-value sample, kept to columns the contract marks sampleAllowed and
    does not classify (the gate already samples only those: this holds the page to it too)."""
    allowed = {c.name for c in plan.columns if c.sample_allowed and not c.classified}
    return [{"column": column, "shown": [json.dumps(value, ensure_ascii=False) for value in values]}
            for column, values in sorted(sample.items()) if column in allowed]


def _schema(plan: Plan, report: dict | None) -> dict | None:
    """The schema check, a column shown as its property name with its physicalName beside it where they differ."""
    if report is None:
        return None
    schema = report["schema"]
    labels = _labels(plan)

    def named(column: str) -> str:
        return f"{labels[column]} (physicalName {column})" if column in labels else column

    return {"ok": schema["ok"], "policy": schema.get("policy"), "missing": [named(c) for c in schema["missing"]],
            "unexpected": schema["unexpected"],
            "type_mismatches": [{**m, "column": named(m["column"])} for m in schema["type_mismatches"]]}


def _rows(decision: Decision | None, report: dict | None) -> dict:
    rows = (report or {}).get("rows") or {}
    return {"landed": decision.rows_landed if decision else None,
            "valid": rows.get("valid"), "invalid": rows.get("invalid"),
            "published": decision.rows_published if decision else None,
            "quarantined": decision.rows_quarantined if decision else None}


def _business_date(plan: Plan, decision: Decision | None) -> str | None:
    """The latest business date the submission published, unless its column is classified."""
    freshness = plan.freshness
    if decision is None or freshness is None:
        return None
    return None if freshness.column in plan.classified_columns else decision.latest_business_date


def _quarantine(plan: Plan, submission_id: str) -> dict:
    address = plan.require_tables().require_quarantine()
    return {"table": address.location,
            "filter": f"{QUARANTINE_SUBMISSION_COLUMN} = '{submission_id}'",
            "query": f"SELECT * FROM {address.sql_name} WHERE {QUARANTINE_SUBMISSION_COLUMN} = '{submission_id}'"}


def _chain(plan: Plan, contract_file: Path, submission_id: str, decision: Decision | None,
           reruns: list[Decision]) -> dict:
    """The re-run chain and how to re-run this batch. A published batch is re-run only as a
    correction (key replacement); the CLI and the DAG's ``rerun_of`` param apply the same rule."""
    correction = decision is not None and decision.outcome in PUBLISHED_OUTCOMES
    dag_id = (decision.dag_id if decision else None) or plan.names.dag_id
    which = ["--object", plan.object] if not plan.names.sole else []
    if decision is not None and decision.final:
        cli = ["contract-gate", "rerun", str(contract_file), submission_id, *which,
               *(["--correction"] if correction else [])]
        trigger = ["airflow", "dags", "trigger", dag_id, "--conf",
                   json.dumps({"rerun_of": submission_id, **({"correction": True} if correction else {})})]
    else:  # no verdict yet: the same batch is gated again under the same submission id
        cli = ["contract-gate", "run", str(contract_file), *which]
        trigger = ["airflow", "dags", "trigger", dag_id]
    return {
        "rerun_of": decision.rerun_of if decision else None,
        "correction": bool(decision and decision.correction),
        "reruns": [{"submission_id": r.submission_id, "outcome": r.outcome,
                    "decided_at": r.decided_at.isoformat(timespec="seconds")} for r in reruns],
        "command": shlex.join(cli),
        "trigger": shlex.join(trigger),
        "as_correction": correction,
        "decided": decision is not None and decision.final,
    }
