"""The retention DAG's pruning of a gate's work folders (``contract_gate.work_folders``): a folder
unchanged for ``[contract_gate] work_dir_days`` goes, a changed one, one whose job still runs,
and anything the gate did not make (a link, a file) stay. Real folders, a real job lock held by a
real process; no Spark."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate.work_folders.job_fence import hold_for_job
from contract_gate.work_folders import gate_folder, keep_days, prune_work_folders, submission_folder

REPO = Path(__file__).resolve().parents[2]
DAY = 86400


@pytest.fixture
def plan(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR", str(tmp_path / "runs"))
    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS", raising=False)
    return compile_plan(REPO / "contracts" / "orders.yaml")


def run_folder(plan, name: str, days_old: float) -> Path:
    """A work folder as a run leaves it (plan, report, a step's result, the job lock), last changed
    ``days_old`` days ago."""
    folder = submission_folder(plan, name)
    (folder / "spark-scratch").mkdir(parents=True)
    for file in ("plan.json", "report.json", "publish.result.json", "job.lock", "spark-scratch/block"):
        (folder / file).write_text("{}", encoding="utf-8")
    date_back(folder, days_old)
    return folder


def date_back(folder: Path, days_old: float) -> None:
    then = time.time() - days_old * DAY
    for path in (*folder.rglob("*"), folder):
        os.utime(path, (then, then), follow_symlinks=False)


def test_folders_unchanged_for_the_days_go_and_the_rest_stay(plan, tmp_path):
    assert keep_days() == 90  # the default
    old = [run_folder(plan, name, 120) for name in ("a1", "retention-scheduled__2026-08-01")]
    fresh = run_folder(plan, "b2", 10)
    touched = run_folder(plan, "c3", 120)
    (touched / "rerun.result.json").write_text("{}", encoding="utf-8")  # a later run of the same submission
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the gate's", encoding="utf-8")
    date_back(outside, 400)
    (gate_folder(plan) / "link").symlink_to(outside, target_is_directory=True)
    (gate_folder(plan) / "note.txt").write_text("a file", encoding="utf-8")
    date_back(gate_folder(plan) / "note.txt", 400)

    removed = prune_work_folders(plan)

    assert removed == sorted(folder.name for folder in old)
    assert not any(folder.exists() for folder in old)
    assert (fresh / "report.json").is_file() and (touched / "report.json").is_file()
    assert (outside / "keep.txt").is_file() and (gate_folder(plan) / "link").is_symlink()
    assert (gate_folder(plan) / "note.txt").is_file()
    # the retention DAG of a later day: `now` decides, not the clock
    later = datetime.now(timezone.utc)
    assert prune_work_folders(plan, now=later + timedelta(days=85)) == ["b2"]
    assert prune_work_folders(plan, now=later + timedelta(days=91)) == ["c3"]
    assert sorted(p.name for p in gate_folder(plan).iterdir()) == ["link", "note.txt"]


def test_a_folder_whose_job_still_runs_is_kept_until_the_job_ends(plan):
    folder = run_folder(plan, "d4", 200)
    descriptor = hold_for_job(folder)  # as the local runner hands it to the job's first process
    job = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE,
                           pass_fds=(descriptor,))
    os.close(descriptor)
    try:
        date_back(folder, 200)
        assert prune_work_folders(plan) == []
        assert (folder / "report.json").is_file()
    finally:
        job.communicate(b"", timeout=30)
    assert prune_work_folders(plan) == ["d4"]
    assert not folder.exists()


@pytest.mark.parametrize("value", ["-1", "ten", "1.5"])
def test_a_bad_number_of_days_names_the_option_and_removes_nothing(plan, monkeypatch, value):
    folder = run_folder(plan, "e5", 200)
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS", value)
    with pytest.raises(ValueError, match=r"\[contract_gate\] work_dir_days .*AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS"):
        prune_work_folders(plan)
    assert (folder / "report.json").is_file()


def test_zero_days_keeps_every_folder(plan, monkeypatch):
    folder = run_folder(plan, "f6", 5000)
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS", "0")
    assert keep_days() is None
    assert prune_work_folders(plan) == []
    assert (folder / "report.json").is_file()
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__WORK_DIR_DAYS", "30")
    assert prune_work_folders(plan) == ["f6"]
