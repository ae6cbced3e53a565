"""kill -9 of the publishing process, then a new run: nothing twice, nothing lost, one decision.

Two trials of ``benchmarks/reliability`` — killed right after the commit and before the record,
and killed inside the record — each starting a Spark JVM in a child process, so the default run
stays affordable. ``benchmarks/reliability/run.py`` runs the full set over all four fault
points and both publication modes (24 trials by default).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "reliability"))

from trials import run_trial  # noqa: E402


@pytest.mark.reliability
@pytest.mark.parametrize(("point", "mode"), [("after_publish", "replace_keys"), ("during_record", "append")])
def test_a_killed_publish_ends_with_one_commit_all_rows_and_one_final_decision(spark, tmp_path, point, mode):
    result = run_trial(spark, tmp_path / "trial", 0, point, mode, random.Random(7))

    assert result.killed
    if point == "after_publish":
        assert result.committed_before_retry and not result.decided_before_retry and result.recovered
    assert (result.tagged_commits, result.duplicated_rows, result.lost_rows, result.unexpected_rows) == (1, 0, 0, 0)
    assert result.final_decisions == 1 and result.decision_matches_commit
