"""Exactly once over Spark Connect: the client publishing a submission is killed with SIGKILL
while its MERGE runs on the server; the retry (a new client) publishes it exactly once and
records one decision. The server is not killed: it may finish the dead client's MERGE, before or
while the retry runs; Delta's idempotent-write pair makes whichever commit lands the only one."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from _client_process import CLIENT, run_client
from waiting import wait_until

TRIALS = 5  # killed clients wanted
MAX_TRIALS = 3 * TRIALS  # a client that finished before its kill moment is a trial, not a kill


def _data_files(target: Path) -> int:
    return len(list(target.glob("*.parquet"))) if target.is_dir() else 0


def _trial(url: str, folder: Path, rng: random.Random) -> dict:
    prepared = run_client("prepare", url, folder)
    target = Path(prepared["tables"]["target"]["path"])
    with (folder / "killed.err").open("w") as err:
        child = subprocess.Popen([sys.executable, str(CLIENT), "publish", url, str(folder)], cwd=folder,
                                 stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        # the MERGE writes its data files before it commits: kill a random moment after the first
        wait_until(lambda: _data_files(target) > 0 or child.poll() is not None, timeout=600, interval=0.02,
                   message="the MERGE writing")
        delay = rng.uniform(0.0, 0.5)
        try:
            child.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    killed = child.returncode == -signal.SIGKILL
    # what the dead client left (the server may still commit its MERGE after this look)
    committed_before = (target / "_delta_log").is_dir() and any(
        h.get("userMetadata") == "once" for h in DeltaTable(str(target)).history())
    decisions_path = Path(prepared["tables"]["decisions"]["path"])
    decided_before = (decisions_path / "_delta_log").is_dir() and any(
        d["submission_id"] == "once" for d in DeltaTable(str(decisions_path)).to_pyarrow_table().to_pylist())
    retried = run_client("publish", url, folder)
    table = DeltaTable(str(target))
    commits = [h["version"] for h in table.history() if h.get("userMetadata") == "once"]
    regions = sorted(table.to_pyarrow_table().column("region_code").to_pylist())
    decisions = DeltaTable(prepared["tables"]["decisions"]["path"]).to_pyarrow_table().to_pylist()
    finals = [d for d in decisions if d["submission_id"] == "once" and d["final"]]
    return {"killed": killed, "delay": round(delay, 2), "committed_before_retry": committed_before,
            "decided_before_retry": decided_before, "commits": commits, "regions": regions,
            "finals": len(finals), "decision_version": finals[0]["target_version_after"] if finals else None,
            "retry_outcome": retried["outcome"]}


@pytest.mark.slow  # five killed clients, two or three clients a trial: several minutes
def test_a_client_killed_mid_publish_is_retried_into_exactly_one_commit_and_decision(
        spark_connect_server, tmp_path):
    rng = random.Random(11)
    results = []
    for number in range(MAX_TRIALS):
        if sum(r["killed"] for r in results) == TRIALS:
            break
        folder = tmp_path / f"trial-{number}"
        folder.mkdir()
        results.append(_trial(spark_connect_server.url, folder, rng))
    print(json.dumps(results))  # the figures for benchmarks/RESULTS.md
    # a fast publish can finish before its kill moment; the trials go on until five were killed
    assert sum(r["killed"] for r in results) == TRIALS, results
    for r in results:
        assert len(r["commits"]) == 1, r  # published exactly once
        assert r["regions"] == sorted(f"K{i}" for i in range(20)), r  # every row once, none lost
        assert r["finals"] == 1 and r["decision_version"] == r["commits"][0], r
        assert r["retry_outcome"] == "published", r
