"""The commands on a contract of two gated objects (the walk's ``meters_pair``): ``preview --object``
previews the named object's accepted batches and decides as the gate did (exit 0), while
``preview`` without it says to name one (exit 2); ``audit --repair`` audits both objects, finds
nothing to repair and exits 0."""

from __future__ import annotations

import json

import pytest

from gate_walk import PAIR, GateWorld


@pytest.mark.slow  # a gate run and a preview on the shared Spark session
def test_preview_and_audit_repair_of_a_two_object_contract(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    world = GateWorld(tmp_path, spark, seed=11)
    stem, (north, south) = PAIR
    contract = world.contracts[f"{stem}.{north}"]
    world.steps.append("setup")
    rows, invalid = world.rows("good", contract)
    world.land(contract, rows)
    world.expect(contract, world.gate(contract), rows, invalid, "good",
                 world.plan(contract).require_tables().require_target().location)
    assert world.disagreements == []

    code, out = world.cli("preview", world.file(contract), "--object", north, "--last", "3", "--json")
    assert code == 0, out
    previewed = json.loads(out[out.index("{"):])
    assert [b["submission_id"] for b in previewed["batches"]] == [contract.last_submission]

    code, out = world.cli("preview", world.file(contract), "--last", "3")
    assert code == 2 and "--object" in out, out

    code, out = world.cli("audit", world.file(contract), "--repair", "--settle", "0", "--json")
    assert code == 0, out
    audited = json.loads(out)
    assert sorted(o["object"] for o in audited["objects"]) == [north, south]
    assert [r for o in audited["objects"] for r in o["repaired"]] == []
    assert next(o for o in audited["objects"] if o["object"] == north)["decisions"] == 1
