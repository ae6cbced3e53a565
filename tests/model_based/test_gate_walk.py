"""The gate's whole life as a seeded random walk (``gate_walk``): after every step the audit finds
nothing, every final decision's rows add up, no row is in a target twice, a stopped run leaves no
final decision, and the tables hold what the reference model says. A fixed seed, so a failure
reproduces; the soak (benchmarks/model_based/soak.py) walks longer with every step type."""

from __future__ import annotations

import os

import pytest

from gate_walk import KNOWN_OPEN, GateWorld

SEED = 20261206
STEPS = int(os.environ.get("GATE_WALK_STEPS", "12"))  # within 5 minutes on an idle CI machine


@pytest.mark.slow  # a few dozen gate runs on the shared Spark session
def test_a_fixed_walk_keeps_the_decision_log_and_the_tables_in_agreement(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    world = GateWorld(tmp_path, spark, SEED, skip=set(KNOWN_OPEN))
    disagreements = world.walk(STEPS)
    assert disagreements == [], f"{world.reproduction()}\n" + "\n".join(
        f"step {d.step} {d.action}: {d.what}" for d in disagreements)
