"""The freshness check over time, with a controlled clock, real Delta targets and a real notifier.

regional_daily_cases has a 2-day SLA on report_date (a date: data for day D counts as of the end
of D, UTC). Its notifier is :class:`FileNotifier`, a real ``BaseNotifier`` whose deliveries are
read back from the file it appends to.
"""

from __future__ import annotations

import datetime as dt

import pytest
from deltalake import DeltaTable
from _freshness_helpers import file_alerts, plan_for, publish_cases, quarantine_cases, read_lines

from contract_gate.freshness.check import check_freshness
from contract_gate.freshness.locations import status_dir
from contract_gate.freshness.status import StatusStore
from contract_gate.notifications.dispatch import AlertDeliveryError

UTC = dt.timezone.utc


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_one_alert_per_stale_episode_and_a_recovery_notice(spark, home):
    alerts_file = home / "alerts.jsonl"
    plan = plan_for(home, alerts=file_alerts(alerts_file))
    target = home / "lakehouse" / "regional_daily_cases"
    quarantine = home / "lakehouse" / "regional_daily_cases_quarantine"
    store = StatusStore(status_dir(plan))
    publish_cases(spark, target, "sub-1", [dt.date(2024, 3, 1), dt.date(2024, 2, 28)])

    # 1. Fresh: 2024-03-01 is complete at 03-02 00:00 UTC; six hours later it is 6 h old.
    first = check_freshness(plan, now=at("2024-03-02T06:00:00"))
    assert (first["state"], first["age_seconds"], first["latest_accepted_date"]) == ("fresh", 6 * 3600, "2024-03-01")
    assert first["latest_accepted_submission"] == "sub-1" and first["source"] == "delta_log"
    assert read_lines(alerts_file) == []

    # 2. Exactly at the SLA it is still fresh; one second later it is stale: exactly one alert.
    assert check_freshness(plan, now=at("2024-03-04T00:00:00"))["state"] == "fresh"
    stale = check_freshness(plan, now=at("2024-03-04T00:00:01"))
    assert (stale["state"], stale["age_seconds"], stale["alerted"]) == ("stale", 2 * 86400 + 1, True)
    [alert] = read_lines(alerts_file)
    assert alert["event"] == "freshness_stale" and alert["contract_id"] == "regional_daily_cases"
    assert alert["age_seconds"] == 172801 and alert["sla_seconds"] == 172800
    assert alert["latest_accepted_submission"] == "sub-1"
    assert alert["message"] == (
        "Accepted data of contract 'regional_daily_cases' (environment local) is STALE: the latest accepted "
        "report_date, 2024-03-01, is 2d old, beyond the freshness SLA of 2 d (172800 s). "
        "Last accepted submission: sub-1. Checked at 2024-03-04T00:00:01Z.")

    # 3. Still stale: no new alert.
    assert check_freshness(plan, now=at("2024-03-04T12:00:00"))["state"] == "stale"
    assert len(read_lines(alerts_file)) == 1

    # 4. A rejected batch (quarantined, target untouched) does not refresh freshness.
    version_before = DeltaTable(str(target)).version()
    quarantine_cases(spark, quarantine, "sub-2-bad", [dt.date(2024, 3, 4)])
    assert DeltaTable(str(target)).version() == version_before
    after_reject = check_freshness(plan, now=at("2024-03-04T13:00:00"))
    assert (after_reject["state"], after_reject["latest_accepted_date"]) == ("stale", "2024-03-01")
    assert after_reject["latest_accepted_submission"] == "sub-1"
    assert len(read_lines(alerts_file)) == 1

    # 5. A new accepted batch: fresh again, one recovery notice.
    publish_cases(spark, target, "sub-3", [dt.date(2024, 3, 4)])
    recovered = check_freshness(plan, now=at("2024-03-04T14:00:00"))
    assert (recovered["state"], recovered["age_seconds"], recovered["alerted"]) == ("fresh", 0, False)
    assert recovered["latest_accepted_submission"] == "sub-3"
    assert [line["event"] for line in read_lines(alerts_file)] == ["freshness_stale", "freshness_recovered"]
    notice = read_lines(alerts_file)[1]
    assert "FRESH again" in notice["message"] and "Stale since 2024-03-04T00:00:01Z" in notice["message"]

    # 6. Fresh and staying fresh: nothing more.
    check_freshness(plan, now=at("2024-03-05T00:00:00"))
    assert len(read_lines(alerts_file)) == 2

    # The status history has one row per check, matching each step.
    history = store.history("regional_daily_cases")
    assert [(row["checked_at"], row["state"], row["latest_accepted_date"], row["latest_accepted_submission"],
             (row["notice"] or {}).get("kind"), row["alerted"]) for row in history] == [
        ("2024-03-02T06:00:00Z", "fresh", "2024-03-01", "sub-1", None, False),
        ("2024-03-04T00:00:00Z", "fresh", "2024-03-01", "sub-1", None, False),
        ("2024-03-04T00:00:01Z", "stale", "2024-03-01", "sub-1", "stale", True),
        ("2024-03-04T12:00:00Z", "stale", "2024-03-01", "sub-1", "stale", True),
        ("2024-03-04T13:00:00Z", "stale", "2024-03-01", "sub-1", "stale", True),
        ("2024-03-04T14:00:00Z", "fresh", "2024-03-04", "sub-3", "recovered", False),
        ("2024-03-05T00:00:00Z", "fresh", "2024-03-04", "sub-3", "recovered", False),
    ]
    assert [row["state_since"] for row in history][2:5] == ["2024-03-04T00:00:01Z"] * 3
    assert store.read("regional_daily_cases") == history[-1]


def test_a_failed_notifier_is_retried_without_repeating_the_delivered_one(spark, home):
    good = home / "good.jsonl"
    broken_target = home / "not-a-file"
    broken_target.mkdir()  # appending to a directory fails: a real delivery failure
    broken = {"class": "contract_gate.notifications.file.FileNotifier", "arguments": {"path": broken_target.name}}
    plan = plan_for(home, alerts=file_alerts(good, broken))
    publish_cases(spark, home / "lakehouse" / "regional_daily_cases", "sub-1", [dt.date(2024, 3, 1)])

    with pytest.raises(AlertDeliveryError, match="1:contract_gate.notifications.file.FileNotifier"):
        check_freshness(plan, now=at("2024-03-10T00:00:00"))
    record = StatusStore(status_dir(plan)).read("regional_daily_cases")
    assert record["notice"]["delivered"] == ["0:contract_gate.notifications.file.FileNotifier"]
    assert record["notice"]["pending"] == ["1:contract_gate.notifications.file.FileNotifier"]
    assert len(read_lines(good)) == 1

    broken_target.rmdir()  # the notifier works again: only the owed alert is sent
    retried = check_freshness(plan, now=at("2024-03-10T01:00:00"))
    assert retried["notice"]["pending"] == []
    assert len(read_lines(good)) == 1 and len(read_lines(broken_target)) == 1


def test_no_accepted_data_is_stale(home):
    alerts_file = home / "alerts.jsonl"
    plan = plan_for(home, alerts=file_alerts(alerts_file))
    record = check_freshness(plan, now=at("2024-03-01T00:00:00"))
    assert (record["state"], record["age_seconds"], record["latest_accepted_date"]) == ("stale", None, None)
    assert "there is no accepted data yet" in read_lines(alerts_file)[0]["message"]
