"""Fault-injection trials: kill -9 the publishing process at a chosen point, run again, check.

The test suite runs three of them (``test_reliability.py``); ``benchmarks/reliability/run.py``
runs many over every fault point and publication mode with this same code.

One trial, on real local Spark and real Delta tables in its own folder:

1. the target already holds an earlier, gated batch (``seed``); a new candidate is frozen
   (``append``: new keys; ``replace_keys``: half of them correct seeded rows; ``split``: new
   keys plus a few rows with a negative count, under the ``split_rows`` policy: the valid rows
   are published, then the invalid ones quarantined);
2. ``_gate_once.py`` publishes and records the submission in a child process (own Python, own
   JVM, own process group) with ``CONTRACT_GATE_FAULT`` naming the point; when it reaches the
   point, the whole process group gets SIGKILL. ``during_publish`` waits until the MERGE has
   written its first data file into the target and then kills after a random delay of up to
   a second, so the kill lands between the data files and the commit or just after the
   commit; ``during_record`` kills a random moment into the decision write;
3. the next run, in this process: ``recover_missing_decisions`` (no grace period: the killed
   run is known dead) and then the same publish-and-record again;
4. checks: the submission's commit appears exactly once in the target's history, the target
   holds exactly the expected rows (none twice: keys are unique; none lost), the quarantine
   table exactly the invalid rows (split) or none, and the decision log holds exactly one final
   decision for it, naming that commit's version. (A split killed between its halves must not
   be recovered as ``published``: recovery leaves it to the retry, which completes it.)
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _gate_once import FAULT_ENV, PAUSES, publish_and_record
from _gate_plans import plan_for
from waiting import wait_until

from contract_gate import decisions
from contract_gate_plan.addresses import Address, candidate_address
from contract_gate_plan.model import load_plan
from contract_gate_spark.steps.history import find_submission, tagged_commits
from contract_gate_spark.steps.publish import publish

HERE = Path(__file__).resolve().parent

DDL = "region_code string, report_date date, reporting_org string, case_count bigint, status string"
ROWS = 40
KILL_DELAY = {"during_publish": (0.0, 1.0), "during_record": (0.0, 0.15)}
CHILD_TIMEOUT = 600


@dataclass
class TrialResult:
    point: str
    mode: str
    killed: bool
    committed_before_retry: bool
    decided_before_retry: bool
    recovered: bool
    tagged_commits: int
    duplicated_rows: int
    lost_rows: int
    unexpected_rows: int
    final_decisions: int
    decision_matches_commit: bool
    quarantine_commits: int
    quarantine_as_expected: bool
    seconds: float

    @property
    def ok(self) -> bool:
        return (self.tagged_commits == 1 and self.duplicated_rows == 0 and self.lost_rows == 0
                and self.unexpected_rows == 0 and self.final_decisions == 1 and self.decision_matches_commit
                and self.quarantine_commits == (1 if self.mode == "split" else 0) and self.quarantine_as_expected)


def plan_under(root: Path, mode: str) -> dict[str, Any]:
    gate: dict[str, Any] = {"publication": {"mode": "append" if mode == "split" else mode}}
    if mode == "split":
        gate["violations"] = {"policy": "split_rows", "maxInvalidShare": 0.5}
    return plan_for("regional_daily_cases", root, **gate)


def rows(prefix: str, count: int, day: int, cases: int) -> list[tuple]:
    return [(f"{prefix}{i:03d}", date(2024, 3, 1) + timedelta(days=day), "GGD", cases + i, "final")
            for i in range(count)]


def run_trial(spark, root: Path, number: int, point: str, mode: str, rng: random.Random) -> TrialResult:
    started = time.perf_counter()
    root.mkdir(parents=True)
    plan = plan_under(root, mode)
    (root / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    seed = rows("R", ROWS, 0, 0)
    batch = rows("R", ROWS // 2, 0, 1000) + rows("N", ROWS // 2, 1, 0) if mode == "replace_keys" \
        else rows("R", ROWS, 1, 0)
    invalid = rows("X", 5, 1, -100) if mode == "split" else []  # case_count < 0: case_count.minimum
    expected = _expected(seed, batch, mode)
    publish(spark, plan, "seed", _frozen(spark, root, "seed", seed), 0)
    submission = f"trial-{number}"
    # where stage freezes a file landing: recovery compares the publish with this candidate
    candidate = _frozen(spark, root, "batch", batch + invalid, candidate_address(Address.of(plan["tables"]["candidate_schema"]), plan["object"], submission).as_document())

    killed = _run_child_and_kill(root, plan, submission, candidate, point, rng)
    committed = find_submission(spark, plan["tables"]["target"], submission) is not None
    decided = decisions.final_decision(load_plan(plan), submission) is not None

    recovered = decisions.recover_missing_decisions(load_plan(plan), min_age=timedelta(0))
    publish_and_record(spark, plan, submission, candidate, 0, run_id=f"{submission}-retry")

    commits = [c for c in tagged_commits(spark, plan["tables"]["target"]) if c.submission_id == submission]
    target = [tuple(r) for r in spark.read.format("delta").load(plan["tables"]["target"]["path"]).collect()]
    keys = [(r[0], r[1]) for r in target]
    finals = [d for d in decisions.store_for(load_plan(plan)).records(submission_id=submission) if d.final]
    quarantine = plan["tables"]["quarantine"]
    held = [c for c in tagged_commits(spark, quarantine) if c.submission_id == submission]
    quarantined = sorted(tuple(r)[:5] for r in spark.read.format("delta").load(quarantine["path"]).collect()) \
        if held else []
    return TrialResult(
        point=point, mode=mode, killed=killed, committed_before_retry=committed, decided_before_retry=decided,
        recovered=any(d["submission_id"] == submission for d in recovered),
        tagged_commits=len(commits),
        duplicated_rows=len(keys) - len(set(keys)),
        lost_rows=len(set(expected) - set(target)),
        unexpected_rows=len(set(target) - set(expected)),
        final_decisions=len(finals),
        decision_matches_commit=bool(finals and commits and finals[0].target_version_after == commits[0].version),
        quarantine_commits=len(held),
        quarantine_as_expected=quarantined == sorted(invalid),
        seconds=round(time.perf_counter() - started, 1),
    )


def _expected(seed: list[tuple], batch: list[tuple], mode: str) -> list[tuple]:
    if mode in ("append", "split"):
        return seed + batch
    replaced = {(r[0], r[1]): r for r in seed}
    replaced.update({(r[0], r[1]): r for r in batch})
    return list(replaced.values())


def _frozen(spark, root: Path, name: str, data: list[tuple], address: dict[str, Any] | None = None) -> dict[str, Any]:
    address = address or {"kind": "path", "path": str(root / "candidates" / name), "format": "delta"}
    spark.createDataFrame(data, DDL).write.format("delta").save(address["path"])
    return address


def _run_child_and_kill(root: Path, plan: dict, submission: str, candidate: dict, point: str,
                        rng: random.Random) -> bool:
    """Start ``_gate_once.py`` with the fault point; SIGKILL its process group there. Returns
    whether the kill happened (False: the child finished before the random delay ran out)."""
    flags = root / "flags"
    flags.mkdir()
    target = Path(plan["tables"]["target"]["path"])
    files_before = set(target.glob("*.parquet"))
    command = [sys.executable, str(HERE / "_gate_once.py"), "--plan", str(root / "plan.json"),
               "--submission-id", submission, "--candidate", json.dumps(candidate), "--version", "0",
               "--run-id", f"{submission}-first", "--flags", str(flags)]
    env = {**os.environ, FAULT_ENV: point, "CONTRACT_GATE_SPARK_LOG_LEVEL": "ERROR"}
    with open(root / "child.log", "wb") as log:
        child = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        def reached() -> bool:
            if child.poll() is not None:
                raise RuntimeError(f"the child exited ({child.returncode}) before {point}; see {root / 'child.log'}")
            return (flags / point).exists()

        try:
            wait_until(reached, CHILD_TIMEOUT, message=f"the child reaching {point}")
            if point == "during_publish":  # the MERGE's first data file (or the child already done)
                wait_until(lambda: child.poll() is not None or set(target.glob("*.parquet")) - files_before,
                           CHILD_TIMEOUT, interval=0.01, message="the MERGE's first data file")
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            raise
        if point not in PAUSES:
            # not a wait: a random moment inside the MERGE or the record is where this trial kills
            time.sleep(rng.uniform(*KILL_DELAY[point]))
        killed = child.poll() is None
        os.killpg(child.pid, signal.SIGKILL)  # python and its JVM: the publishing process dies whole
        child.wait()
    _wait_group_gone(child.pid)
    return killed


def _wait_group_gone(group: int) -> None:
    """The JVM dies with its group; wait until no live member is left before the next run.
    (Zombies do not count: in a container, PID 1 may never reap the orphaned JVM.)"""
    wait_until(lambda: not _live_members(group), 10, message=f"process group {group} ending after SIGKILL")


def _live_members(group: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def summary(results: list[TrialResult]) -> dict[str, Any]:
    return {
        "trials": len(results),
        "passed": sum(r.ok for r in results),
        "killed": sum(r.killed for r in results),
        "killed_after_commit_before_decision": sum(r.committed_before_retry and not r.decided_before_retry
                                                   for r in results),
        "recovered_by_history": sum(r.recovered for r in results),
        "duplicated_rows": sum(r.duplicated_rows for r in results),
        "lost_rows": sum(r.lost_rows + r.unexpected_rows for r in results),
        "submissions_without_exactly_one_final_decision": sum(r.final_decisions != 1 for r in results),
        "results": [asdict(r) for r in results],
    }
