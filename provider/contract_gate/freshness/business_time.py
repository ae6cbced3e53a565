"""What a business date or timestamp means in time, and how old it is.

* A ``date`` value D stands for the whole UTC day D, so the data is "as of" the END of that day
  (D+1 00:00 UTC) and its age is measured from there. Data for a day cannot be complete before
  the day ends; measuring from the start would make yesterday's batch, published this morning,
  already more than a day old, and a 1-day SLA on daily data unmeetable.
* A ``timestamp`` is an instant; Delta statistics carry it with the writer's UTC offset and it is
  converted to UTC. A ``timestamp_ntz`` has no zone and is read as UTC wall-clock time.
* Age is ``now - as_of`` in whole seconds, never negative (business dates in the future are
  simply fresh). The data is stale when the age is strictly greater than the SLA.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

DATE_TYPES = ("date",)
TIMESTAMP_TYPES = ("timestamp", "timestamp_ntz")


def parse_value(text: str, column_type: str) -> date | datetime:
    """A statistic / partition value / SQL result (ISO text) as a date or an aware UTC datetime."""
    if column_type in DATE_TYPES:
        return date.fromisoformat(text[:10])
    if column_type in TIMESTAMP_TYPES:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
    raise ValueError(f"freshness needs a date or timestamp column, not {column_type}")


def from_statistic(value: date | datetime, column_type: str) -> date | datetime:
    """A typed statistic or partition value (as ``deltalake`` returns it) as :func:`parse_value`
    would give it: a date, or an aware UTC datetime (a ``timestamp_ntz`` is read as UTC)."""
    if column_type in DATE_TYPES:
        return value.date() if isinstance(value, datetime) else value
    if column_type in TIMESTAMP_TYPES:
        if not isinstance(value, datetime):
            raise ValueError(f"a {column_type} column's statistic must be a datetime, not a date")
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)
    raise ValueError(f"freshness needs a date or timestamp column, not {column_type}")


def as_of(value: date | datetime) -> datetime:
    """The instant up to which the data is complete (see module docstring)."""
    if isinstance(value, datetime):
        return value
    return datetime.combine(value + timedelta(days=1), time.min, tzinfo=timezone.utc)


def age_seconds(value: date | datetime, now: datetime) -> int:
    return max(0, int((now - as_of(value)).total_seconds()))


def render(value: date | datetime) -> str:
    """ISO text for status files and alerts: ``2024-01-05`` or ``2024-01-05T10:00:00Z``."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def render_duration(seconds: int) -> str:
    """``2d 4h``, ``5h 30m``, ``45s``: readable ages for alert text."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n]
    if not parts:
        return f"{secs}s"
    return " ".join(parts[:2])
