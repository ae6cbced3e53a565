"""A generated gate DAG through ``dag.test()`` in ``spark_connect`` mode against a real Spark
Connect server with Delta: a good batch published, a bad batch quarantined and then re-run fixed,
a ``split_rows`` contract split, each with its exact rows and one decision; and the Airflow
process (a child of this test's session, ``connect_gate_world``) starts no Java process while it
runs. The same runs' lineage and metrics are tests/airflow/test_lineage_and_metrics.py's."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable


@pytest.mark.slow  # four DAG runs in an Airflow process of their own
def test_the_gate_dag_in_spark_connect_mode_starts_no_jvm(connect_gate_world):
    world = connect_gate_world
    assert world["java"] == {}, f"Java started below the process running the DAG: {world['java']}"
    home, runs = Path(world["home"]), world["runs"]

    def rows(table: str) -> list[dict]:
        return DeltaTable(str(home / "lakehouse" / table)).to_pyarrow_table().to_pylist()

    for name, run in runs.items():
        failed = {task: state for task, state in run["states"].items() if state not in ("success", "skipped")}
        assert failed == {}, (name, failed)
    good, bad, rerun, split = (runs[name]["decision"] for name in ("published", "rejected", "rerun", "split"))
    assert good["outcome"] == "published" and good["submission_id"] == runs["published"]["submission"]["submission_id"]
    assert bad["outcome"] == "quarantined" and bad["rule_failures"] == {"case_count.minimum": 1, "status.enum": 1}
    assert rerun["outcome"] == "published" and rerun["rerun_of"] == bad["submission_id"]
    assert split["outcome"] == "split"

    target = rows("regional_daily_cases")
    # the good batch's rows, and the bad batch's only as its fixed re-run published them
    assert sorted((r["region_code"], r["case_count"]) for r in target) == [
        ("B0", 10), ("B1", 11), ("B2", 12), ("G0", 10), ("G1", 11), ("G2", 12)]
    quarantined = [r for r in rows("regional_daily_cases_quarantine") if r["_submission_id"] == bad["submission_id"]]
    assert sorted(r["region_code"] for r in quarantined) == ["B0", "B1", "B2"]
    assert sorted(r["order_id"] for r in rows("orders")) == ["O0", "O1", "O2", "O3"]
    assert [r["order_id"] for r in rows("orders_quarantine")] == ["X0"]
    history = DeltaTable(str(home / "lakehouse" / "regional_daily_cases")).history()
    assert sorted(h["userMetadata"] for h in history if h.get("userMetadata")) == sorted(
        [good["submission_id"], rerun["submission_id"]])

    # one decision per submission in the decision log
    decisions = rows("contract_gate_decisions")
    for decision in (good, bad, rerun, split):
        mine = [d for d in decisions if d["submission_id"] == decision["submission_id"]]
        assert len(mine) == 1 and mine[0]["outcome"] == decision["outcome"], mine
