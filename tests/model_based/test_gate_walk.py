"""The gate's whole life as a seeded random walk (``gate_walk``): after every step the audit finds
nothing, every final decision's rows add up, no row is in a target twice, a stopped run leaves no
final decision and each table holds its batch's share whole or not at all, as its ``failed``
record counts, and the tables hold what the reference model says; after a run in the
``spark_connect`` mode is stopped, no job of it runs on the server, and once a stopped run in the
``databricks`` mode, or of ``spark_submit`` on a standalone cluster or in client deploy mode, is
decided, no run, driver or process of it goes on; each rejected decision told the contract's
notifier once (a run whose record task was killed: at least once). A fixed seed, so a failure reproduces, whose walk
stops a run of each of those modes at random places; the soak (benchmarks/model_based/soak.py)
walks longer with every step type."""

from __future__ import annotations

import os

import pytest

from gate_walk import KNOWN_OPEN, GateWorld

SEED = 20261206
STEPS = int(os.environ.get("GATE_WALK_STEPS", "12"))  # within 5 minutes on an idle CI machine
REMOTE_STOPS = {"connect": ("stop_connect_sigterm", "stop_connect_sigkill"),
                "databricks": ("stop_databricks_sigterm", "stop_databricks_sigkill"),
                "standalone": ("stop_standalone_sigterm", "stop_standalone_sigkill"),
                "client deploy mode": ("stop_submit_client_sigterm", "stop_submit_client_sigkill")}


@pytest.mark.slow  # a few dozen gate runs on the shared Spark session
def test_a_fixed_walk_keeps_the_decision_log_and_the_tables_in_agreement(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    world = GateWorld(tmp_path, spark, SEED, skip=set(KNOWN_OPEN))
    try:
        disagreements = world.walk(STEPS, required=tuple(REMOTE_STOPS.values()))
    finally:
        world.close()
    print(f"{world.reproduction()}; Connect stops, seconds until no job of the run on the server: {world.connect_stops}; "
          f"Databricks stops, runs the decision ended: {world.databricks_stops}; "
          f"standalone stops, drivers the decision ended: {world.standalone_stops}")
    for mode, names in REMOTE_STOPS.items():
        assert set(names) & set(world.steps), f"the walk stops no {mode} run"
    assert disagreements == [], f"{world.reproduction()}\n" + "\n".join(
        f"step {d.step} {d.action}: {d.what}" for d in disagreements)
