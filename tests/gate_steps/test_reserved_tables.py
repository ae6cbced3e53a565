"""The Spark side refuses a plan whose target, quarantine or landing is where the gate keeps its
own folders (``contract_gate_plan.reserved``), before any step writes: a plan made by hand, not by
the compiler (which refuses such a contract at lint), leaves every folder as it was."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from _gate_plans import order, plan_for, write_json

from contract_gate_plan.document import PlanError
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.steps.stage import stage_candidate


def _moved(plan: dict, role: str, path: str) -> dict:
    """``plan`` by hand: ``role``'s table at ``path``, the fingerprint left out (as in-process plans)."""
    moved = copy.deepcopy(plan)
    moved.pop("fingerprint")
    moved["tables"][role]["path"] = path
    return moved


def _files(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*") if p.is_file())


def test_a_plan_with_a_reserved_table_is_refused_before_any_write(spark, tmp_path):
    plan = plan_for("orders", tmp_path)
    write_json(Path(plan["tables"]["landing"]["path"]), [order("O-1"), order("O-2", total=-1.0)])
    staged = stage_candidate(spark, plan, "s1")
    lakehouse = tmp_path / "lakehouse"
    (lakehouse / "_runs").mkdir()
    before = _files(lakehouse)

    into_runs = _moved(plan, "target", f"{lakehouse}/_runs/orders")
    with pytest.raises(PlanError, match="the target '.*/_runs/orders' lies inside '_runs', a name the gate keeps"):
        publish(spark, into_runs, "s1", staged["candidate"], staged["version"])
    into_status = _moved(plan, "quarantine", f"{lakehouse}/_contract_gate_status")
    with pytest.raises(PlanError, match="the quarantine '.*' is named '_contract_gate_status'"):
        quarantine(spark, into_status, "s1", staged["candidate"], staged["version"], report=None)
    from_candidates = _moved(plan, "landing", f"{lakehouse}/_contract_gate_candidates")
    with pytest.raises(PlanError, match="the landing '.*' is named '_contract_gate_candidates'"):
        stage_candidate(spark, from_candidates, "s2")

    assert _files(lakehouse) == before
    assert not (lakehouse / "orders").exists() and not (lakehouse / "_contract_gate_status").exists()
