"""Recovery: a publish or quarantine that reached its table but not the decision log is found
in the commit history and recorded, once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from _gate_plans import case, cases_df, plan_for, version_of
from contract_gate import decisions
from contract_gate_plan.model import load_plan
from contract_gate.decisions.delta_path import DeltaPathDecisionStore, DeltaPathHistory
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine

NOW = timedelta(0)


def _candidate(spark, tmp_path, name, rows):
    address = {"kind": "path", "path": str(tmp_path / "lakehouse/_contract_gate_candidates" / name), "format": "delta"}
    cases_df(spark, rows).write.format("delta").save(address["path"])
    return address


@pytest.mark.slow  # 8 s or more
def test_publishes_and_quarantines_without_a_decision_are_recorded_once(spark, tmp_path):
    plan = plan_for("regional_daily_cases", tmp_path)
    store, history = DeltaPathDecisionStore(plan["tables"]["decisions"]), DeltaPathHistory()
    publish(spark, plan, "pub", _candidate(spark, tmp_path, "regional_daily_cases__pub", [case("A", 1), case("B", 3)]), 0)
    published_at = version_of(spark, plan["tables"]["target"])
    mixed = _candidate(spark, tmp_path, "regional_daily_cases__mix", [case("C", 1), case("D", 1, -1)])
    publish(spark, plan, "mix", mixed, 0, rows="valid")
    quarantine(spark, plan, "mix", mixed, 0, report=None, rows="invalid")
    quarantine(spark, plan, "bad", _candidate(spark, tmp_path, "regional_daily_cases__bad", [case("E", 1, -1)]),
               0, report=None)
    decisions.record_decision(load_plan(plan), {"submission_id": "bad", "contract_id": "regional_daily_cases",
                                     "contract_version": "1.0.0", "outcome": "quarantined"}, store)

    assert decisions.recover_missing_decisions(load_plan(plan), store, history) == []  # too young: their runs may still record

    recovered = decisions.recover_missing_decisions(load_plan(plan), store, history, min_age=NOW)

    by_id = {d["submission_id"]: d for d in recovered}
    assert sorted(by_id) == ["mix", "pub"]
    assert {k: by_id["pub"][k] for k in ("outcome", "source", "target_version_before", "target_version_after",
                                         "rows_published", "latest_business_date", "candidate_version")} == {
        "outcome": "published", "source": "recovery", "target_version_before": published_at - 1,
        "target_version_after": published_at, "rows_published": 2, "latest_business_date": "2024-03-03",
        "candidate_version": 0}
    assert by_id["pub"]["candidate"].endswith("_contract_gate_candidates/regional_daily_cases__pub")
    assert (by_id["mix"]["outcome"], by_id["mix"]["rows_published"], by_id["mix"]["rows_quarantined"]) == ("split", 1, 1)
    assert decisions.recover_missing_decisions(load_plan(plan), store, history, min_age=NOW) == []
    assert [len(store.records(submission_id=s)) for s in ("pub", "mix", "bad")] == [1, 1, 1]


@pytest.mark.slow  # 8 s or more
def test_a_split_that_died_between_its_halves_is_left_for_the_retrigger_to_complete(spark, tmp_path):
    """Under ``split_rows`` a publish commit alone is either a full publish or the first half of a
    split; the candidate's row count tells them apart. The half-done split gets no final decision
    (``published`` would be false and would make the gate skip the batch), and the re-triggered
    split (publish found done, quarantine written) is then recovered or recorded as ``split``."""
    plan = plan_for("regional_daily_cases", tmp_path, violations={"policy": "split_rows"})
    store, history = DeltaPathDecisionStore(plan["tables"]["decisions"]), DeltaPathHistory()
    clean = _candidate(spark, tmp_path, "regional_daily_cases__clean", [case("A", 1), case("B", 1)])
    publish(spark, plan, "clean", clean, 0)
    mixed = _candidate(spark, tmp_path, "regional_daily_cases__half",
                       [case("C", 1), case("D", 1), case("E", 1, -1)])
    publish(spark, plan, "half", mixed, 0, rows="valid")  # the run dies here
    after_first_half = version_of(spark, plan["tables"]["target"])

    recovered = decisions.recover_missing_decisions(load_plan(plan), store, history, min_age=NOW)

    assert [(d["submission_id"], d["outcome"], d["rows_published"]) for d in recovered] == [("clean", "published", 2)]
    assert store.final("half") is None

    # the re-triggered split: the publish half is found done, the quarantine half runs
    publish(spark, plan, "half", mixed, 0, rows="valid")
    quarantine(spark, plan, "half", mixed, 0, report=None, rows="invalid")
    assert version_of(spark, plan["tables"]["target"]) == after_first_half
    recovered = decisions.recover_missing_decisions(load_plan(plan), store, history, min_age=NOW)
    assert [(d["submission_id"], d["outcome"], d["rows_published"], d["rows_quarantined"]) for d in recovered] == [
        ("half", "split", 2, 1)]
    assert sorted(r.region_code for r in spark.read.format("delta").load(plan["tables"]["target"]["path"]).collect()) == [
        "A", "B", "C", "D"]


def test_row_count_reads_the_snapshot_statistics(spark, tmp_path):
    address = _candidate(spark, tmp_path, "counted", [case("A", 1), case("B", 1), case("C", 2)])
    cases_df(spark, [case("D", 1)]).write.format("delta").mode("append").save(address["path"])
    history = DeltaPathHistory()
    assert (history.row_count(address, 0), history.row_count(address, 1)) == (3, 4)
    assert history.row_count({"kind": "path", "path": str(tmp_path / "nothing"), "format": "delta"}, 0) is None


@pytest.mark.slow  # 8 s or more
def test_a_run_that_failed_between_the_halves_of_its_split_records_what_it_committed(spark, tmp_path):
    """The failed record of a run whose split died after its publish says what the tables hold
    (rows and target versions of the submission's commit), not 0, and stays not final: the
    re-triggered split completes it and its final record agrees with both commits."""
    from contract_gate.operators.record import verdict

    plan = plan_for("regional_daily_cases", tmp_path, violations={"policy": "split_rows"})
    store, history = DeltaPathDecisionStore(plan["tables"]["decisions"]), DeltaPathHistory()
    mixed = _candidate(spark, tmp_path, "regional_daily_cases__half",
                       [case("C", 1), case("D", 1), case("E", 1, -1)])
    assert decisions.recovery.committed_effects(load_plan(plan), "half", history) == (
        {"rows_published": 0, "rows_quarantined": 0}, None)
    half = publish(spark, plan, "half", mixed, 0, rows="valid")  # the split task fails here

    failed = verdict({"submission_id": "half"}, None, {"split": None}, {"split": "failed"})
    committed, note = decisions.recovery.committed_effects(load_plan(plan), "half", history)
    failed.update(committed, reason=f"{failed['reason']}; {note}")
    recorded = decisions.record_decision(load_plan(plan), {**failed, "contract_id": "regional_daily_cases",
                                                           "contract_version": "1.0.0"}, store)

    assert (recorded["outcome"], recorded["rows_published"], recorded["rows_quarantined"]) == ("failed", 2, 0)
    assert (recorded["target_version_before"], recorded["target_version_after"]) == (
        half["target_version_before"], half["target_version_after"])
    assert f"committed 2 rows to the target (version {half['target_version_after']})" in recorded["reason"]
    assert store.final("half") is None
    done = quarantine(spark, plan, "half", mixed, 0, report=None, rows="invalid")  # the re-triggered split
    assert decisions.recovery.committed_effects(load_plan(plan), "half", history)[0] == {
        "rows_published": 2, "rows_quarantined": 1, "target_version_before": half["target_version_before"],
        "target_version_after": half["target_version_after"]}
    assert done["rows"] == 1
