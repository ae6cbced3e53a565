"""The typed states of a gate step and of a rule in its report, shared by both sides.

A stop is a state of its own: a step or rule ``stopped`` by a time budget or by a kill or cancel
from outside never judged the batch, unlike a rule ``not_evaluated`` for a reason of its own (a
missing column, a query that fails), which counts against it, and unlike a step that ``failed``.
No verdict follows from a stopped step: its validation is recorded ``failed``, not final, and
nothing is published or quarantined.

The values are the report's and the results' JSON strings (a ``StrEnum`` member is its string),
and they are stable: docs/plan-format.md ("Rule and step states") lists them.
"""

from __future__ import annotations

from enum import StrEnum


class RuleStatus(StrEnum):
    """How far a rule of the report got."""

    EVALUATED = "evaluated"
    """Measured and judged: its entry's ``passed`` says how."""
    NOT_EVALUATED = "not_evaluated"
    """It cannot be evaluated on this batch (a missing column, a query that fails, a check the
    gate cannot run): it fails the batch at its severity, except at ``depth=schema``."""
    NOT_EXECUTED = "not_executed"
    """Left to another step (``batch_keys``) or documentation only (``text`` rules): neutral."""
    STOPPED = "stopped"
    """Its evaluation was stopped (a time budget ran out, or the job was killed or cancelled):
    no verdict, on it or on the batch."""


class StepState(StrEnum):
    """How a gate step (a job's validation, publish, quarantine...) ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    """The step itself broke (a Spark error, a lost cluster): no verdict, the batch may be gated again."""
    STOPPED = "stopped"
    """Stopped by a time budget or by a kill or cancel from outside: no verdict either."""


class Outcome(StrEnum):
    """A report's outcome: the validation's verdict on the batch, or ``stopped`` (none)."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    STOPPED = "stopped"
