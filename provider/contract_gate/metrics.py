"""The four metrics that tell whether the gate works, through Airflow's own ``Stats`` (StatsD,
Datadog or OpenTelemetry, as ``[metrics]`` configures; nothing is sent when metrics are off).

========================================  =======  ====================================================
name (after Airflow's ``statsd_prefix``)  type     value and tags
========================================  =======  ====================================================
``contract_gate.rejections``              counter  +1 per rejected submission (``quarantined``, or the
                                                   rows ``split`` off) and per failing error rule;
                                                   tags ``contract``, ``rule``
``contract_gate.receipt_to_publication``  timer    from the gate run's receipt of the batch (its
                                                   submission task) to the published decision;
                                                   tag ``contract``
``contract_gate.accepted_data_age``       gauge    seconds since the latest accepted business date
                                                   (the freshness SLA's measure), at every
                                                   publication and every freshness check;
                                                   tag ``contract``
``contract_gate.time_to_resolve``         timer    from a quarantined submission's decision to the
                                                   decision that published its re-run (following
                                                   ``rerun_of`` back to the first quarantine);
                                                   tag ``contract``
========================================  =======  ====================================================

A contract of several gated objects adds the tag ``object`` (the schema object's name) to each;
a one-object contract's metrics carry ``contract`` alone, as they always did.

Timers are milliseconds, as StatsD and Airflow's own timers are. Tags are contract, object and rule ids
(characters outside ``A-Za-z0-9_.-`` become ``_``), never data values; the age gauge is not sent when the business-date column is classified (an age
gives the date away, which the freshness status withholds too). A metric that cannot be sent
never fails a gate: it is logged as a warning.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timezone
from typing import Any

from contract_gate import decisions
from contract_gate_plan.model import Plan

REJECTIONS = "contract_gate.rejections"
RECEIPT_TO_PUBLICATION = "contract_gate.receipt_to_publication"
ACCEPTED_DATA_AGE = "contract_gate.accepted_data_age"
TIME_TO_RESOLVE = "contract_gate.time_to_resolve"
REJECTED_OUTCOMES = ("quarantined", "split")
MAX_RERUN_CHAIN = 100  # a re-run chain is walked back at most this far (a loop cannot hang the task)

log = logging.getLogger(__name__)
_UNSAFE_IN_TAG = re.compile(r"[^A-Za-z0-9_.-]")


def tag(text: str) -> str:
    """A contract's id or rule id as a tag value: characters a metrics backend may read as
    syntax (StatsD's ``:``, ``|``, ``,``, ``=``, a newline; markup) become ``_``, so a hostile
    contract can neither forge a metric line nor get its metric dropped as an invalid name."""
    return _UNSAFE_IN_TAG.sub("_", str(text))[:100]


def gate_tags(plan: Plan) -> dict[str, str]:
    """The tags naming a plan's gate: ``contract``, plus ``object`` when the contract has several."""
    return {"contract": tag(plan.contract_id), **({"object": tag(plan.object)} if not plan.names.sole else {})}


def _stats():
    from contract_gate.airflow_compat import stats  # Airflow: the freshness check also runs without it

    return stats()


def _when(value: str | datetime) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def rejected_rules(record: dict[str, Any], summary: dict | None) -> list[str]:
    """The rule ids a rejection counts against: the failing ``error`` rules, else ``schema``
    when the batch's schema did not match, else ``unattributed``."""
    rules = sorted({rule["id"] for rule in record.get("rules") or [] if rule.get("severity") == "error"})
    if rules:
        return rules
    return ["schema"] if (summary or {}).get("schema_ok") is False else ["unattributed"]


def first_rejection(plan: Plan, rerun_of: str | None) -> dict | None:
    """The earliest rejected decision of the re-run chain ending in ``rerun_of``, or None when
    ``rerun_of`` was not rejected (a correction of a published submission resolves nothing)."""
    first: dict | None = None
    seen: set[str] = set()
    while rerun_of and rerun_of not in seen and len(seen) < MAX_RERUN_CHAIN:
        seen.add(rerun_of)
        previous = decisions.final_decision(plan, rerun_of)
        if previous is None or previous["outcome"] != "quarantined":
            break
        first, rerun_of = previous, previous.get("rerun_of")
    return first


def accepted_data_age(plan: Plan, age_seconds: float | None) -> None:
    """Send the age of the latest accepted business date (None: nothing that may be sent); never raises."""
    if age_seconds is None:
        return
    try:
        _stats().gauge(ACCEPTED_DATA_AGE, age_seconds, tags=gate_tags(plan))
    except Exception:  # noqa: BLE001 - metrics are observability: they never fail the gate
        log.warning("contract-gate metric %s not sent", ACCEPTED_DATA_AGE, exc_info=True)


def decision_recorded(plan: Plan, stored: dict[str, Any], record: dict[str, Any], submission: dict,
                      summary: dict | None, accepted_age: float | None = None) -> None:
    """Send what a newly recorded final decision tells, with the accepted data's age after a
    publication (``freshness.check.age_after_publication``); never raises."""
    try:
        _send_decision(plan, stored, record, submission, summary, accepted_age)
    except Exception:  # noqa: BLE001 - metrics are observability: they never fail the gate
        log.warning("contract-gate metrics for submission %s not sent", stored.get("submission_id"), exc_info=True)


def _send_decision(plan: Plan, stored: dict, record: dict, submission: dict, summary: dict | None,
                   accepted_age: float | None) -> None:
    stats, gate = _stats(), gate_tags(plan)
    outcome, decided = stored["outcome"], _when(stored["decided_at"])
    if outcome in REJECTED_OUTCOMES:
        for rule in rejected_rules(record, summary):
            stats.incr(REJECTIONS, tags={**gate, "rule": tag(rule)})
    if outcome not in decisions.PUBLISHED_OUTCOMES:
        return
    if submission.get("received_at"):
        stats.timing(RECEIPT_TO_PUBLICATION, decided - _when(submission["received_at"]), tags=gate)
    rejected = first_rejection(plan, stored.get("rerun_of"))
    if rejected is not None:
        stats.timing(TIME_TO_RESOLVE, decided - _when(rejected["decided_at"]), tags=gate)
    accepted_data_age(plan, accepted_age)
