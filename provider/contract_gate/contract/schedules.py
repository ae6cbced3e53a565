"""Which schedules a contract may give its gate (``schedule``) and freshness (``alerts.freshnessSchedule``) DAGs.

Airflow takes a schedule as it is written, and every contract's DAGs share one scheduler and its
workers. ``@continuous`` starts a run the moment the last one ends, a busy loop of gate runs
whether anything landed or not (``schedule: "@landing"`` starts a run when a batch has landed);
a six-field cron fires every second. A schedule Airflow cannot read failed only when the DAG
file was parsed, not at ``lint``. So a schedule is one of Airflow's presets or ``@once``, or a
five-field cron expression (minute, hour, day of month, month, day of week) that croniter, the
parser Airflow's timetables use, reads.
"""

from __future__ import annotations

from croniter import croniter

PRESETS = ("@once", "@hourly", "@daily", "@weekly", "@monthly", "@quarterly", "@yearly")


def schedule_problem(schedule: str, on_landing: bool = False) -> str | None:
    """Why ``schedule`` is no schedule a contract may give; None when it is one. ``on_landing``: the
    DAG may also start when a batch lands (the gate's, not the freshness check's)."""
    if schedule in PRESETS:
        return None
    if schedule == "@continuous":
        return ("schedule '@continuous' starts a run the moment the last one ends, whether anything landed or not; "
                + ("use \"@landing\" to start a run when a batch has landed, or " if on_landing else "use ")
                + "a cron expression")
    fields = schedule.split()
    if len(fields) != 5 or not croniter.is_valid(schedule):
        return (f"schedule {schedule!r} is neither a cron expression of five fields (minute hour day-of-month month "
                f"day-of-week, e.g. '0 * * * *') nor one of {', '.join(PRESETS)}"
                + (", @landing" if on_landing else ""))
    return None
