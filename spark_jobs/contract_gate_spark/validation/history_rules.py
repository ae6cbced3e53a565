"""The report entry of a history rule: its threshold judged as any rule's, then its measure
against the last accepted batches (``contract_gate_plan.batch_history``).

The engine never reads the decision log: the gate reads the accepted batches' measures before the
job starts and hands them in (``--history``, docs/architecture.md "History rules"), as
``{rule id: [{submission_id, rows, nulls}, ...]}``, newest first. Where none is handed in (``validate``
of a file or a target, a preview, a notebook) the rule says that it was not judged on its history;
while the history is shorter than the rule's ``batches`` it says that, too. Both are warnings,
never a silent pass and never a rejection. Only counts and shares are reported, never values.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from contract_gate_plan.batch_history import MEASURE_OF_KIND, ROW_COUNT, judge, share
from contract_gate_plan.model import Rule
from contract_gate_plan.states import RuleStatus

NOT_GIVEN = ("not judged on its history here: only a gate reads the last accepted batches from its "
             "decision log")


def judge_history(entry: dict[str, Any], rule: Rule, past: list[dict[str, Any]] | None) -> None:
    """Add the history verdict to ``entry``, a rule judged on its threshold (``past``: the
    accepted batches handed in, None when none were)."""
    if rule.history is None or entry["status"] != RuleStatus.EVALUATED or entry["measured"] is None:
        return
    measure = MEASURE_OF_KIND[rule.kind]
    if past is None:
        entry["history"] = {**rule.history.as_json(), "accepted": None, "median": None}
        _short(entry, NOT_GIVEN)
        return
    measured = _measure(measure, entry["evaluated_rows"], entry["failed_rows"])
    known = [value for value in (_measure(measure, item.get("rows"), item.get("nulls")) for item in past)
             if value is not None]
    assert measured is not None  # an evaluated row count or metric counts its rows
    judgement = judge(measure, measured, known, rule.history)
    entry["history"] = judgement.as_report(rule.history)
    if judgement.passed is None:
        _short(entry, judgement.reason)
    elif not judgement.passed:
        entry["passed"] = False
        entry["reason"] = _joined(entry["reason"], judgement.reason)


def _measure(measure: str, rows: Any, nulls: Any) -> Fraction | None:
    """A batch's row count, or its null share in percent; None when the record lacks it."""
    if not isinstance(rows, int):
        return None
    if measure == ROW_COUNT:
        return Fraction(rows)
    return share(nulls, rows) if isinstance(nulls, int) else None


def _short(entry: dict[str, Any], why: str) -> None:
    """A rule that cannot be judged on its history: a warning that says so, unless its threshold
    failed it already (then it fails at its own severity)."""
    if entry["passed"] is not False:
        entry["severity"] = "warning"
        entry["passed"] = False
    entry["reason"] = _joined(entry["reason"], why)


def _joined(reason: str | None, more: str) -> str:
    return f"{reason}; {more}" if reason else more
