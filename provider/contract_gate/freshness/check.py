"""One freshness check: evaluate, send what the episode owes, record the status.

The order matters for exactly-once alerting: the notice is sent before the status is written
and the record says which notifiers got it, so a crash or a failed notifier leaves the owed
deliveries pending for the next check (or task retry) instead of losing or repeating them.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from contract_gate.freshness.episodes import owed_notice, settle
from contract_gate.freshness.latest import latest_accepted
from contract_gate.freshness.locations import status_dir
from contract_gate.freshness.messages import freshness_payload
from contract_gate.freshness.status import STALE, StatusStore, evaluate, sendable_age
from contract_gate.metrics import accepted_data_age
from contract_gate.notifications import notifier_keys
from contract_gate.notifications.dispatch import AlertDeliveryError, deliver
from contract_gate_plan.model import Plan

log = logging.getLogger(__name__)


def check_freshness(plan: Plan, *, now: datetime | None = None, store: StatusStore | None = None,
                    runner=None) -> dict:
    """Check ``plan``'s SLA at ``now`` (default: the current UTC time), alert on a change of
    episode, write and return the status record.

    :param store: where status is kept; default :func:`~contract_gate.freshness.locations.status_dir`.
    :param runner: runs SQL on the warehouse for a catalog target (default: from the gate's connection).
    :raises AlertDeliveryError: after the status is written, when a notifier failed.
    """
    if plan.freshness is None or not plan.gated:
        raise ValueError(f"contract {plan.contract_id!r} has no freshness SLA or no gate settings")
    now = now or datetime.now(timezone.utc).replace(microsecond=0)
    store = store or StatusStore(status_dir(plan))
    record = evaluate(plan, latest_accepted(plan, runner), now)
    accepted_data_age(plan, sendable_age(record))
    previous = store.read(record["gate"])
    previous_since = previous["state_since"] if previous else None
    same_episode = previous is not None and previous["state"] == record["state"]
    record["state_since"] = previous_since if same_episode else record["checked_at"]
    notifiers = dict(zip(notifier_keys(plan.notifiers), plan.notifiers))
    notice, recipients = owed_notice(previous, record["state"], list(notifiers))
    failures: dict[str, str] = {}
    if notice is not None and recipients:  # a notice is owed to someone
        payload = freshness_payload(record, notice["kind"], None if same_episode else previous_since)
        failures = deliver({key: notifiers[key] for key in recipients}, payload)
        notice = settle(notice, recipients, list(failures), record["checked_at"])
    record["notice"] = notice
    record["alerted"] = record["state"] == STALE and bool(notice and notice["delivered"])
    store.write(record)
    if notice is not None and failures:
        raise AlertDeliveryError(f"freshness {notice['kind']} notice not delivered to: "
                                 + "; ".join(f"{key} ({error})" for key, error in failures.items()))
    return record


def age_after_publication(plan: Plan) -> float | None:
    """The accepted data's age once a publication is recorded, for the metrics: a path target's
    only (a catalog target would cost a SQL warehouse query per publication; its freshness DAG
    sends the age). Never raises: metrics never fail the gate."""
    if plan.freshness is None or plan.tables is None or not plan.tables.require_target().is_path:
        return None
    try:
        return sendable_age(evaluate(plan, latest_accepted(plan), datetime.now(timezone.utc)))
    except Exception:  # noqa: BLE001 - metrics are observability: they never fail the gate
        log.warning("accepted data age of %s not measured", plan.contract_id, exc_info=True)
        return None
