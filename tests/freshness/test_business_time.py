"""Business-date semantics: a date counts from the end of its UTC day; timestamps are UTC instants."""

from __future__ import annotations

import datetime as dt

import pytest

from contract_gate.freshness.business_time import age_seconds, as_of, parse_value, render, render_duration

UTC = dt.timezone.utc


def test_a_date_is_complete_at_the_end_of_its_utc_day():
    day = parse_value("2024-03-01", "date")
    assert as_of(day) == dt.datetime(2024, 3, 2, tzinfo=UTC)
    assert age_seconds(day, dt.datetime(2024, 3, 2, 6, tzinfo=UTC)) == 6 * 3600
    assert age_seconds(day, dt.datetime(2024, 3, 1, 12, tzinfo=UTC)) == 0  # the day is not over: not old at all


@pytest.mark.parametrize("text, column_type, expected", [
    ("2024-03-01T20:30:00.250-05:00", "timestamp", dt.datetime(2024, 3, 2, 1, 30, 0, 250000, tzinfo=UTC)),
    ("2024-03-01T20:30:00Z", "timestamp", dt.datetime(2024, 3, 1, 20, 30, tzinfo=UTC)),
    ("2024-03-01T20:30:00.000", "timestamp_ntz", dt.datetime(2024, 3, 1, 20, 30, tzinfo=UTC)),
    ("2024-03-01 20:30:00", "timestamp_ntz", dt.datetime(2024, 3, 1, 20, 30, tzinfo=UTC)),
])
def test_timestamps_are_utc_instants(text, column_type, expected):
    value = parse_value(text, column_type)
    assert value == expected and as_of(value) == expected


def test_rendering():
    assert render(dt.date(2024, 3, 1)) == "2024-03-01"
    assert render(dt.datetime(2024, 3, 1, 20, 30, tzinfo=UTC)) == "2024-03-01T20:30:00Z"
    assert [render_duration(s) for s in (45, 3600 + 120, 2 * 86400 + 4 * 3600 + 59, 86400)] == ["45s", "1h 2m", "2d 4h", "1d"]


def test_other_types_are_refused():
    with pytest.raises(ValueError, match="date or timestamp"):
        parse_value("3", "bigint")
