"""kill -9 of the publishing process, then a new run: nothing twice, nothing lost, one decision.

Three of the trials of ``_fault_trials`` — killed right after the commit and before the
record, killed inside the record, and a row split killed between publishing its valid rows and
quarantining its invalid ones — each starting a Spark JVM in a child process, so the default run
stays affordable. ``benchmarks/reliability/run.py`` runs the same trials over all four fault
points and both publication modes (24 trials by default).
"""

from __future__ import annotations

import random

import pytest
from _fault_trials import run_trial


@pytest.mark.reliability
@pytest.mark.parametrize(("point", "mode"), [("after_publish", "replace_keys"), ("during_record", "append"),
                                           ("after_publish", "split")])
def test_a_killed_publish_ends_with_one_commit_all_rows_and_one_final_decision(spark, tmp_path, point, mode):
    result = run_trial(spark, tmp_path / "trial", 0, point, mode, random.Random(7))

    assert result.killed
    if point == "after_publish":
        assert result.committed_before_retry and not result.decided_before_retry
        # a split killed between its halves is not recovered as published: the retry completes it
        assert result.recovered is (mode != "split")
    assert result.quarantine_commits == (1 if mode == "split" else 0) and result.quarantine_as_expected
    assert (result.tagged_commits, result.duplicated_rows, result.lost_rows, result.unexpected_rows) == (1, 0, 0, 0)
    assert result.final_decisions == 1 and result.decision_matches_commit
