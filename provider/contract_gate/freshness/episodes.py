"""One alert per stale episode, a recovery notice when it ends, nothing in between.

The previous status record carries the bookkeeping (``notice``): which notice the current
episode calls for and which notifiers have and have not received it. A check then only sends
what is still owed, so a check that finds the data still stale sends nothing, while a notifier
that failed is retried on the next check (or task retry) without repeating the others.
Notifiers are named by :func:`contract_gate.notifications.notifier_keys`.
"""

from __future__ import annotations

from contract_gate.freshness.status import STALE

STALE_ALERT = "stale"
RECOVERY = "recovered"


def owed_notice(previous: dict | None, state: str, keys: list[str]) -> tuple[dict | None, list[str]]:
    """(the notice of the current episode, the notifier keys it must still go to)."""
    previous_state = previous["state"] if previous else None
    previous_notice = previous.get("notice") if previous else None
    if state == previous_state:
        if previous_notice is None:
            return None, []
        return previous_notice, [key for key in previous_notice["pending"] if key in keys]
    if state == STALE:
        return {"kind": STALE_ALERT, "delivered": [], "pending": list(keys), "sent_at": None}, list(keys)
    told = previous_notice["delivered"] if previous_notice and previous_notice["kind"] == STALE_ALERT else []
    recipients = [key for key in keys if key in told]
    if not recipients:
        return None, []
    return {"kind": RECOVERY, "delivered": [], "pending": recipients, "sent_at": None}, recipients


def settle(notice: dict, sent: list[str], failed: list[str], at: str) -> dict:
    """The notice after sending to ``sent`` (all delivered but ``failed``)."""
    delivered = [key for key in sent if key not in failed]
    return {
        "kind": notice["kind"],
        "delivered": [*notice["delivered"], *[k for k in delivered if k not in notice["delivered"]]],
        "pending": [key for key in notice["pending"] if key not in delivered],
        "sent_at": at if delivered else notice["sent_at"],
    }
