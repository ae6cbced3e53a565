"""Time budgets inside Spark (``contract_gate_spark.runtime.budget``): a contract query that would run for
hours is cancelled by Spark when ``limits.querySeconds`` or ``limits.validationSeconds`` runs
out, the validation stops naming the rule that was running, and Spark's own status tracker
shows no job left running. A query within its budget is untouched."""

from __future__ import annotations

import pytest
from _spark_plans import cases_plan, rule, rule_entry, with_rules
from waiting import wait_until

from contract_gate_plan.document import PlanError
from contract_gate_plan.model import load_plan
from contract_gate_spark.runtime.budget import TimeBudget, TimeBudgetExceeded
from contract_gate_spark.validation.engine import run_validation

# An equality self-join on a two-value column: every pair of rows with the same value, a hash of
# each pair. On ROWS rows it hashes 4.5e10 pairs: hours on two cores (the allow-list accepts it: two reads of
# {object}, an equality between two columns, no literal-sized builder).
SLOW_QUERY = ("SELECT count(*) FROM {object} AS a JOIN {object} AS b ON a.status = b.status "
              "WHERE sha2(concat(a.region_code, b.region_code), 256) = 'x'")
ROWS = 300_000


@pytest.fixture(scope="module")
def many_rows_table(spark, tmp_path_factory):
    """A Delta candidate of ROWS rows, as a gate reads one (Spark cancels a scan of it at once)."""
    path = str(tmp_path_factory.mktemp("budget") / "candidate")
    spark.range(ROWS).selectExpr(
        "concat('R', id) AS region_code", "date'2024-03-01' AS report_date", "'GGD' AS reporting_org",
        "id AS case_count", "if(id % 2 = 0, 'confirmed', 'probable') AS status").write.format("delta").save(path)
    return path


@pytest.fixture
def many_rows(spark, many_rows_table):
    return lambda _spark: spark.read.format("delta").load(many_rows_table)


def plan_with_limits(validation_seconds: int, query_seconds: int, *queries: dict) -> dict:
    limits = {"validationSeconds": validation_seconds, "querySeconds": query_seconds}
    return with_rules(cases_plan(gate={"limits": limits}), *queries)


def slow_rule(rule_id: str = "pairs.hash") -> dict:
    return rule(rule_id, "sql", [], query=SLOW_QUERY, threshold={"operator": "mustBe", "value": 0})


def no_job_running(spark) -> bool:
    """Spark's own view: no active job, and no task still running on an executor (a cancelled
    job's tasks stop only at their next look at their input)."""
    tasks = sum(executor.numRunningTasks() for executor in
                spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos())  # not in pyspark's tracker
    return not spark.sparkContext.statusTracker().getActiveJobsIds() and tasks == 0


def test_a_query_past_its_budget_stops_the_validation_naming_the_rule(spark, many_rows):
    plan = plan_with_limits(600, 3, slow_rule())
    with pytest.raises(TimeBudgetExceeded) as stopped:
        run_validation(spark, plan, many_rows(spark))
    stop = stopped.value.stop
    assert (stop.reason, stop.running, stop.seconds, stop.setting) == (
        "time budget exceeded", "rule 'pairs.hash'", 3, "limits.querySeconds")
    assert str(stopped.value) == ("time budget exceeded: rule 'pairs.hash' was still running after 3 s "
                                  "(limits.querySeconds)")
    # Spark cancelled the query's jobs itself: its status shows none running
    wait_until(lambda: no_job_running(spark), timeout=10, message="no Spark job running")


def test_the_validation_budget_stops_a_query_within_its_own(spark, many_rows):
    plan = plan_with_limits(10, 600, slow_rule("pairs.slow"))  # the pass before it is one count
    with pytest.raises(TimeBudgetExceeded, match=r"rule 'pairs.slow' was still running after 10 s "
                                                 r"\(limits.validationSeconds\)"):
        run_validation(spark, plan, many_rows(spark))
    wait_until(lambda: no_job_running(spark), timeout=10, message="no Spark job running")


def test_work_within_its_budget_is_untouched_and_the_session_keeps_no_tag(spark, many_rows):
    plan = plan_with_limits(600, 60, rule("total", "sql", [], query="SELECT count(*) FROM {object}",
                                          threshold={"operator": "mustBe", "value": ROWS}))
    interrupt_on_cancel = spark.sparkContext.getLocalProperty("spark.job.interruptOnCancel")
    report = run_validation(spark, plan, many_rows(spark))
    assert rule_entry(report, "total")["passed"] is True
    assert set(spark.sparkContext.getJobTags()) == set()
    # the thread's setting is as it was before (other tests of the worker may have set it)
    assert spark.sparkContext.getLocalProperty("spark.job.interruptOnCancel") == interrupt_on_cancel


def test_a_block_that_fails_on_its_own_keeps_its_error(spark):
    with pytest.raises(ZeroDivisionError), TimeBudget(spark, 60, "a block", "limits.querySeconds"):
        1 / 0


def test_a_plan_without_limits_gets_the_defaults_and_bad_limits_are_refused():
    assert load_plan(cases_plan()).limits.validation_seconds == 1800
    assert load_plan(cases_plan()).limits.query_seconds == 300
    with pytest.raises(PlanError, match="plan.gate.limits.querySeconds must be a whole number of seconds"):
        load_plan(cases_plan(gate={"limits": {"validationSeconds": 10, "querySeconds": 0}}))
