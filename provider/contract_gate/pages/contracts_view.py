"""The contracts page, as plain data for the template: every contract with its freshness state,
the last audit of its decision log, its last decisions, the outcomes of its last N submissions
and which rules rejected them.

Freshness is evaluated now, read-only, from the same sources as the freshness DAG and
``contract-gate status`` (no alert, nothing written); the business date is withheld when its
column is classified, as the status record does.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from contract_gate.freshness.business_time import render_duration
from contract_gate.freshness.latest import latest_accepted
from contract_gate.freshness.locations import audit_status_dir, status_dir
from contract_gate.freshness.status import StatusStore, evaluate
from contract_gate.pages.chart import bar_chart
from contract_gate.pages.data import ContractEntry
from contract_gate_plan.model import Plan

NO_SLA = "no SLA"
NOT_CHECKED = "not checked yet"  # a catalog target the freshness DAG has not checked
NOT_AUDITED = "not audited yet"  # the retention DAG's audit task has not run
# every outcome of a submission's decision; a migration record (``migrated``) is listed, not counted
OUTCOME_ORDER = ("published", "split", "quarantined", "failed")
SHOWN_DECISIONS = 10  # decisions listed per contract; the counts and the chart use all of the last N


def contracts_view(entries: list[ContractEntry], decisions: dict[str, list[dict] | Exception],
                   now: datetime, last: int) -> dict:
    """The page: one card per schema object (``contract`` + ``object``), in file order;
    ``decisions`` as :func:`contract_gate.pages.data.recent_decisions` returns them for the last ``last``."""
    return {"checked_at": now.isoformat(timespec="seconds"), "last": last,
            "contracts": [contract_view(entry, decisions.get(entry.plan.names.gate) if entry.plan else None, now)
                          for entry in entries]}


def contract_view(entry: ContractEntry, decisions: list[dict] | Exception | None, now: datetime) -> dict:
    view: dict[str, Any] = {"file": entry.file.name, "id": entry.contract_id, "object": entry.object,
            "object_link": entry.object if entry.several_objects else None, "not_gated": entry.not_gated,
            "error": entry.error, "gated": entry.gated, "version": None, "name": None, "freshness": None,
            "counts": None, "decisions": None, "chart": None, "decisions_table": None, "audit": None}
    if entry.plan is None:
        return view
    plan = entry.plan
    view.update(version=plan.contract_version, name=plan.contract_name)
    if not entry.gated:
        return view
    view["decisions_table"] = plan.require_tables().require_decisions().location
    view["audit"] = audit_view(StatusStore(audit_status_dir(plan)).read(plan.names.gate))
    errors = []
    try:
        view["freshness"] = freshness_view(plan, now)
    except Exception as exc:  # an unreadable target must not hide the rest of the page
        errors.append(f"freshness: {type(exc).__name__}: {exc}")
    if isinstance(decisions, Exception):
        errors.append(f"decisions: {type(decisions).__name__}: {decisions}")
    elif decisions is not None:
        view["decisions"] = [_decision_row(d) for d in decisions[:SHOWN_DECISIONS]]
        view["counts"] = outcome_counts(decisions)
        view["chart"] = bar_chart(rejections_by_rule(decisions))
    view["error"] = "; ".join(errors) or None
    return view


def freshness_view(plan: Plan, now: datetime) -> dict:
    """State (``fresh``, ``stale`` or ``no SLA``), the age of the latest accepted business date
    against the SLA, and the submission that brought it. A path target is evaluated now (its
    Delta log, no JVM); for a catalog target the page shows the freshness DAG's last record
    (``as_of`` its check), since a page view must not start a query on a SQL warehouse."""
    if plan.freshness is None:
        return {"state": NO_SLA, "age": None, "sla": None, "latest": None, "submission": None, "withheld": False,
                "as_of": None}
    status: dict[str, Any] | None
    if plan.require_tables().require_target().is_path:
        status, as_of = evaluate(plan, latest_accepted(plan), now), None
    else:
        status = StatusStore(status_dir(plan)).read(plan.names.gate)
        if status is None:
            return {"state": NOT_CHECKED, "age": None, "sla": None, "latest": None, "submission": None,
                    "withheld": False, "as_of": None}
        as_of = status["checked_at"]
    sla = status["sla"]
    return {
        "state": status["state"],
        "age": None if status["age_seconds"] is None else render_duration(status["age_seconds"]),
        "sla": f"{sla['value']} {sla['unit']} ({sla['property']} of {sla['column']})",
        "latest": status["latest_accepted_date"],
        "withheld": status["latest_accepted_date_withheld"],
        "submission": status["latest_accepted_submission"],
        "as_of": as_of,
    }


def audit_view(status: dict | None) -> dict:
    """The last audit as the retention DAG's audit task recorded it (``state``: ``clean``,
    ``disagreement`` or ``not audited yet``), what it found, and when."""
    if status is None:
        return {"state": NOT_AUDITED, "checked_at": None,
                "detail": "the retention DAG's daily audit_decisions task has not run"}
    if status["clean"]:
        detail = f"{status['decisions']} final decision(s) and {status['commits']} tagged commit(s) agree with the tables"
    else:
        detail = f"{status['findings']} disagreement(s): " + ", ".join(
            f"{kind} × {n}" for kind, n in status["kinds"].items())
    return {"state": "clean" if status["clean"] else "disagreement", "checked_at": status["checked_at"],
            "detail": detail}


def outcome_counts(decisions: list[dict]) -> dict[str, int]:
    """Records per outcome (every outcome present, zeros included, in a fixed order)."""
    counted = Counter(d["outcome"] for d in decisions)
    return {outcome: counted.get(outcome, 0) for outcome in OUTCOME_ORDER}


def rejections_by_rule(decisions: list[dict]) -> list[tuple[str, int, int]]:
    """(rule id, submissions it failed in, rows it failed) over ``decisions``, most submissions
    first. A dataset or query rule fails without a row count; it counts as a submission."""
    submissions: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    for decision in decisions:
        for rule_id in dict.fromkeys(decision["failed_rules"]):
            submissions[rule_id] += 1
            rows[rule_id] += decision["rule_failures"].get(rule_id, 0)
    return sorted(((rule, n, rows[rule]) for rule, n in submissions.items()), key=lambda item: (-item[1], item[0]))


def _decision_row(decision: dict) -> dict:
    return {"submission_id": decision["submission_id"], "outcome": decision["outcome"],
            "decided_at": _utc(decision["decided_at"]).isoformat(timespec="seconds"),
            "rows_published": decision["rows_published"], "rows_quarantined": decision["rows_quarantined"],
            "failed_rules": len(decision["failed_rules"]), "rerun_of": decision["rerun_of"],
            "version": decision.get("contract_version"), "migration": migration_summary(decision)}


def migration_summary(decision: dict) -> str | None:
    """``1.0.0 → 1.1.0, 4 statements`` for a migration record (the target migrated), else None."""
    migration = decision.get("migration")
    if isinstance(migration, str):  # as the table holds it
        migration = json.loads(migration)
    if not migration:
        return None
    return (f"{migration['from_version'] or 'unknown'} → {decision['contract_version']}, "
            f"{len(migration['statements'])} statements")


def _utc(moment: datetime) -> datetime:
    """A stored time in UTC (the table's timestamps carry UTC; a naive one is UTC too)."""
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
