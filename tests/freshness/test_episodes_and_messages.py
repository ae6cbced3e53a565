"""The alert bookkeeping and the alert text, as pure functions."""

from __future__ import annotations

import datetime as dt

from _freshness_helpers import plan_for

from contract_gate.freshness.episodes import owed_notice, settle
from contract_gate.freshness.latest import LatestAccepted
from contract_gate.freshness.messages import freshness_payload
from contract_gate.freshness.status import evaluate

KEYS = ["0:a.Slack", "1:b.Smtp"]


def test_recovery_goes_only_to_notifiers_that_heard_of_the_stale_episode():
    notice, recipients = owed_notice(None, "stale", KEYS)
    assert recipients == KEYS
    notice = settle(notice, recipients, failed=["1:b.Smtp"], at="t1")
    assert (notice["delivered"], notice["pending"], notice["sent_at"]) == (["0:a.Slack"], ["1:b.Smtp"], "t1")
    previous = {"state": "stale", "notice": notice}
    assert owed_notice(previous, "stale", KEYS)[1] == ["1:b.Smtp"]  # owed, retried
    recovery, recipients = owed_notice(previous, "fresh", KEYS)
    assert (recovery["kind"], recipients) == ("recovered", ["0:a.Slack"])


def test_a_first_fresh_check_and_an_unannounced_episode_owe_nothing():
    assert owed_notice(None, "fresh", KEYS) == (None, [])
    silent = {"state": "stale", "notice": {"kind": "stale", "delivered": [], "pending": KEYS, "sent_at": None}}
    assert owed_notice(silent, "fresh", KEYS) == (None, [])


def test_classified_sla_column_keeps_the_date_out_of_status_and_alerts(tmp_path):
    plan = plan_for(tmp_path, base="orders", classify="order_timestamp")
    latest = LatestAccepted(dt.datetime(2024, 3, 1, 8, tzinfo=dt.timezone.utc), "sub-7", 4, "delta_log")
    record = evaluate(plan, latest, dt.datetime(2024, 3, 1, 20, tzinfo=dt.timezone.utc))
    assert (record["state"], record["age_seconds"], record["sla_seconds"]) == ("stale", 12 * 3600, 6 * 3600)
    assert record["latest_accepted_date"] is None and record["latest_accepted_date_withheld"] is True
    payload = freshness_payload({**record, "state_since": record["checked_at"]}, "stale")
    assert "2024-03-01T08:00:00Z" not in str(payload) and "(withheld: classified column)" in payload["message"]
    assert payload["message"].startswith("Accepted data of contract 'orders' (environment local) is STALE: "
                                         "the latest accepted order_timestamp, (withheld: classified column), is 12h old")
