"""Concurrent publication: different submissions to one target all publish once (optimistic
conflicts retried); the same submission started twice publishes once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from _gate_plans import case, cases_df, plan_for, table_rows
from contract_gate_spark.steps.history import tagged_commits
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.target import ensure_target


def _candidate(spark, tmp_path, name, rows):
    address = {"kind": "path", "path": str(tmp_path / "candidates" / name), "format": "delta"}
    cases_df(spark, rows).write.format("delta").save(address["path"])
    return address


def _race(calls):
    with ThreadPoolExecutor(len(calls)) as pool:
        return [future.result() for future in [pool.submit(call) for call in calls]]


@pytest.mark.slow  # 8 s or more
def test_different_submissions_at_once_each_publish_once(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    candidates = {f"s{i}": _candidate(spark, tmp_path, f"s{i}", [case(f"R{i}", 1), case(f"R{i}", 2)]) for i in range(3)}

    results = _race([lambda s=s, c=c: publish(spark, plan, s, c, 0) for s, c in candidates.items()])

    assert [r["status"] for r in results] == ["published"] * 3
    commits = tagged_commits(spark, plan["tables"]["target"])
    assert sorted(c.submission_id for c in commits) == sorted(candidates)
    assert sorted(r["target_version_after"] for r in results) == sorted(c.version for c in commits)
    assert len(table_rows(spark, plan["tables"]["target"])) == 6


def test_the_same_submission_started_twice_at_once_publishes_once(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    ensure_target(spark, plan)
    candidate = _candidate(spark, tmp_path, "twin", [case("NL-NH", 1), case("NL-UT", 1)])

    results = _race([lambda: publish(spark, plan, "twin", candidate, 0)] * 2)

    [commit] = tagged_commits(spark, plan["tables"]["target"])
    assert {r["target_version_after"] for r in results} == {commit.version}
    # one run made the commit; Delta skipped the other's write (its txnAppId was applied)
    assert sorted(r["status"] for r in results) == ["already_published", "published"]
    assert len(table_rows(spark, plan["tables"]["target"])) == 2
