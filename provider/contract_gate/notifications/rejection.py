"""The alert on a rejected submission: what it says, and its delivery to ``alerts.onRejection``.

The record task calls :func:`alert_rejection` right after it recorded a ``quarantined``, ``split``
or ``failed`` decision, and a later try of the same run calls it again for the notifiers not told
yet (a try killed in between, :mod:`contract_gate.notifications.receipts`). The payload is all
the notifiers' templates see, as ``contract_gate`` (:mod:`contract_gate.notifications.dispatch`);
``title`` (one line, for a subject) and ``message`` (plain text) are ready-made for arguments
such as ``subject: "{{ contract_gate.title }}"``. It carries the
contract, the submission, the row counts per failing rule and the report page's link: counts
and names only, never a value of a column (a rule's measured value is left out, as in the
decision record, because a ``type: sql`` rule may measure a data value).

The ``failed`` run that uses up its batch's runs (``runs_per_batch``,
:mod:`contract_gate.contract.retry_policy`) says so in the same alert (``retry_cap``): neither the
landing watcher nor the schedule gates that batch again, so a person has to.

A notifier that fails is tried again a few times, the others are not told twice; what still
fails is returned to the caller, and the decision is never touched.
"""

from __future__ import annotations

from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_attempt, wait_exponential

from contract_gate.notifications import notifier_keys
from contract_gate.notifications.dispatch import deliver
from contract_gate.notifications.receipts import AlertReceipts
from contract_gate_plan.model import Plan

REJECTED_OUTCOMES = frozenset({"quarantined", "split", "failed"})
ATTEMPTS = 3
BACKOFF_SECONDS = 2.0  # doubled after each failed attempt: a mail relay's brief outage passes
_LONGEST_TEXT = 200  # a contract's id or rule id in one line of an alert


def _one_line(text: object) -> str:
    """Contract text in an alert: whitespace collapsed (no header or line injection), cut short."""
    line = " ".join(str(text).split())
    return line if len(line) <= _LONGEST_TEXT else line[:_LONGEST_TEXT - 1] + "…"


def rejection_payload(plan: Plan, decision: dict, report_url: str, retry_cap: int | None = None) -> dict:
    """The notifiers' ``contract_gate`` context entry for a rejected ``decision``; ``retry_cap``: the
    batch's ``runs_per_batch`` when this failed run was the last one it gets."""
    outcome = decision["outcome"]
    counts = {_one_line(rule): count for rule, count in sorted((decision.get("rule_failures") or {}).items())}
    rules = list(dict.fromkeys(_one_line(rule) for rule in decision.get("failed_rules") or []))
    where = (f"contract {_one_line(plan.contract_id)} {_one_line(plan.contract_version)}, "
             f"object {_one_line(plan.object)}"
             + (f", environment {_one_line(plan.environment)}" if plan.environment else ""))
    failing = "; ".join(f"{rule}: {counts[rule]} row(s)" if rule in counts else f"{rule}: failed"
                        for rule in rules) or "none"
    rows = (f"{decision.get('rows_landed')} landed, {decision.get('rows_published')} published, "
            f"{decision.get('rows_quarantined')} quarantined")
    lines = [
        f"Submission {_one_line(decision['submission_id'])} of {where} was {outcome.upper()}.",
        *([f"Why: {_one_line(decision['reason'])}"] if decision.get("reason") else []),
        *([f"Retry cap reached: the batch failed in {retry_cap} of {retry_cap} runs (runs per batch), and the gate "
           "does not gate it again by itself: fix the cause and re-run it (contract-gate rerun), or land a new "
           "batch."] if retry_cap else []),
        f"Rows: {rows}.",
        f"Failing rules: {failing}.",
        f"Report: {report_url}",
        f"Airflow run: {decision.get('dag_id')} / {decision.get('run_id')}",
    ]
    return {
        "event": "submission_rejected",
        "contract_id": plan.contract_id,
        "contract_version": plan.contract_version,
        "object": plan.object,
        "environment": plan.environment,
        "submission_id": decision["submission_id"],
        "outcome": outcome,
        "reason": decision.get("reason"),
        "rule_failures": counts,
        "failed_rules": rules,
        "rows_landed": decision.get("rows_landed"),
        "rows_published": decision.get("rows_published"),
        "rows_quarantined": decision.get("rows_quarantined"),
        "rerun_of": decision.get("rerun_of"),
        "retry_cap": retry_cap,
        "dag_id": decision.get("dag_id"),
        "run_id": decision.get("run_id"),
        "report_url": report_url,
        "title": (f"contract-gate: {_one_line(plan.contract_id)} submission "
                  f"{_one_line(decision['submission_id'])} {outcome}"
                  + (", retry cap reached" if retry_cap else "")),
        "message": "\n".join(lines),
    }


def alert_rejection(plan: Plan, decision: dict, report_url: str, *, retry_cap: int | None = None,
                    receipts: AlertReceipts | None = None, attempts: int = ATTEMPTS,
                    backoff_seconds: float = BACKOFF_SECONDS) -> dict[str, str]:
    """Tell every notifier of ``alerts.onRejection`` about ``decision`` (``retry_cap``: see
    :func:`rejection_payload`), but those ``receipts`` say were told already, and write each one
    told down there; returns ``{notifier key: error}`` for those still failing after ``attempts``
    tries (empty: all were told once)."""
    refs = plan.rejection_notifiers
    told = receipts.told() if receipts is not None else set()
    pending = {key: ref for key, ref in zip(notifier_keys(refs), refs) if key not in told}
    if not pending or decision["outcome"] not in REJECTED_OUTCOMES:
        return {}
    alert = rejection_payload(plan, decision, report_url, retry_cap)

    def tell_pending() -> dict[str, str]:
        """One attempt: the notifiers not told yet; those that fail are the next attempt's."""
        nonlocal pending
        failures = deliver(pending, alert, receipts.add if receipts is not None else None)
        pending = {key: pending[key] for key in failures}
        return failures

    retrying = Retrying(retry=retry_if_result(bool), stop=stop_after_attempt(attempts),
                        wait=wait_exponential(multiplier=backoff_seconds), retry_error_callback=_last_result)
    return retrying(tell_pending)


def _last_result(state: RetryCallState) -> Any:
    """What the last attempt returned: a failing notifier is a result (its error), not an exception,
    so after the last attempt it is returned instead of tenacity's ``RetryError``."""
    assert state.outcome is not None  # tenacity calls this once an attempt has ended
    return state.outcome.result()
