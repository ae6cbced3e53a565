"""Gate processes recording decisions into one decision table at once (for
test_decision_log_scale): each is a separate OS process started with ``spawn``, so every one
loads the table and commits through delta-rs on its own, as concurrent Airflow tasks do."""

from __future__ import annotations

import multiprocessing
from datetime import datetime, timezone

from contract_gate.decisions.delta_path import DeltaPathDecisionStore
from contract_gate.decisions.record import Decision
from contract_gate_plan.model import Plan, compiled_plan

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def decisions_plan(path: str, contract_id: str, version: str = "1.0.0", object_name: str | None = None,
                   names: dict | None = None) -> Plan:
    """A plan whose only table is the decision table at ``path``: what the decision store and its
    readers use (the object is the contract's only one unless ``names`` says otherwise)."""
    return compiled_plan({"fingerprint": "sha256:test", "contract": {"id": contract_id, "version": version},
                          "object": object_name or contract_id, "columns": [], "key": [], "rules": [],
                          "schema_policy": "strict", "freshness": None, **({"names": names} if names else {}),
                          "tables": {"decisions": {"kind": "path", "path": path, "format": "delta"}}})


def decision(submission_id: str, contract_id: str, outcome: str = "published", **extra) -> Decision:
    return Decision(submission_id=submission_id, contract_id=contract_id, contract_version="1.0.0",
                    outcome=outcome, **{"decided_at": T0, **extra})


def store(path: str) -> DeltaPathDecisionStore:
    return DeltaPathDecisionStore({"kind": "path", "path": path, "format": "delta"})


def record_submissions(path: str, worker: int, submissions: list[tuple[str, str]], start, results) -> None:
    """Record one final decision per ``(contract_id, submission_id)``; report what each call did."""
    decisions = store(path)
    start.wait()
    outcomes = []
    for contract_id, submission_id in submissions:
        try:
            stored = decisions.record(decision(submission_id, contract_id, run_id=f"worker-{worker}"))
            outcomes.append(("ok", contract_id, stored.submission_id))
        except Exception as exc:  # noqa: BLE001 - reported to the test, which asserts there are none
            outcomes.append(("error", contract_id, f"{submission_id}: {type(exc).__name__}: {exc}"))
    results.put((worker, outcomes))


def record_one(path: str, worker: int, record: Decision, start, results) -> None:
    """Record ``record``; report the record the store says stands for the submission."""
    decisions = store(path)
    start.wait()
    try:
        results.put((worker, "ok", decisions.record(record).as_dict()))
    except Exception as exc:  # noqa: BLE001 - reported to the test, which asserts there are none
        results.put((worker, "error", f"{type(exc).__name__}: {exc}"))


def run_upkeep(path: str, worker: int, contract_ids: list[str], rounds: int, start, results) -> None:
    """The retention DAGs' upkeep of ``contract_ids``, ``rounds`` times, while gates record."""
    decisions = store(path)
    start.wait()
    try:
        results.put((worker, "ok", [decisions.upkeep(c)["files_removed"] for _ in range(rounds) for c in contract_ids]))
    except Exception as exc:  # noqa: BLE001 - reported to the test, which asserts there are none
        results.put((worker, "error", f"{type(exc).__name__}: {exc}"))


def run_at_once(target, arguments: list[tuple], others: list[tuple] = ()) -> list:
    """Start one spawned process per argument tuple (and per ``(target, arguments)`` of
    ``others``), release them together, return their results."""
    context = multiprocessing.get_context("spawn")
    calls = [(target, args) for args in arguments] + list(others)
    start = context.Barrier(len(calls))
    results = context.Queue()
    processes = [context.Process(target=call, args=(*args, start, results)) for call, args in calls]
    for process in processes:
        process.start()
    collected = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0] * len(processes)
    return collected
