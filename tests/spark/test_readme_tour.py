"""README.md's "A ten-line tour", line by line, as a newcomer runs it in a fresh clone: the real
``contract-gate`` processes (local Airflow, local Spark), in a git repository holding the files
a clone has, with a shell environment that sets nothing of Airflow's or the gate's. The one
placeholder, ``<submission_id>``, is the submission the tour's ``run`` printed. The line that
starts a long-lived Airflow (``airflow up``: services on fixed ports until ``airflow down``) is
checked for its options here and run end to end by tests/deploy."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# What each command of the tour ends with: the run's batch is rejected (1), and the sample
# contracts' freshness SLA may find the published orders stale (status 1) on a later day.
EXIT = {"lint": {0}, "plan": {0}, "init": {0}, "validate": {0}, "run": {1}, "rerun": {0}, "diff": {0},
        "preview": {0}, "status": {0, 1}, "audit": {0}, "dags": {0}, "airflow": {0}}
LONG_LIVED = ("airflow", "up")


def tour_commands() -> list[str]:
    """The tour's commands, comments dropped, one per ``;``-separated part, as README.md has them."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## A ten-line tour\n+```bash\n(.*?)```", text, re.S)
    assert block, "README.md has no ten-line tour"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    return [command.strip() for line in lines for command in line.split(";")]


@pytest.fixture
def clone(tmp_path) -> Path:
    """The files of a fresh clone the tour reads, committed twice (``@HEAD~1`` names a version)."""
    for folder in ("contracts", "dags", "samples"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    git = ["git", "-c", "user.name=newcomer", "-c", "user.email=newcomer@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "the contracts"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "a later commit"], cwd=tmp_path, check=True)
    return tmp_path


def newcomers_shell() -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "CONTRACT_GATE", "SPARK_REMOTE", "PYTEST"))}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}


@pytest.mark.slow  # ten CLI processes: a local Airflow and four local Spark starts
def test_the_ten_line_tour_runs_as_written(clone):
    commands = tour_commands()
    assert len(commands) >= 10 and all(command.startswith("contract-gate ") for command in commands)
    submission = None
    for line in commands:
        if "<submission_id>" in line:
            assert submission, "the tour re-runs a submission before running one"
            line = line.replace("<submission_id>", submission)
        args = shlex.split(line)
        if tuple(args[1:3]) == LONG_LIVED:
            args.append("--help")
        done = subprocess.run(args, cwd=clone, env=newcomers_shell(), capture_output=True, text=True, timeout=900,
                              check=False)

        assert done.returncode in EXIT[args[1]], f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        # quiet: no Airflow, Spark or JSON log line on the terminal, only what the command says
        assert len(done.stderr.splitlines()) <= 1, f"{line}\n{done.stderr[-3000:]}"
        assert not re.search(r"WARN|\[info|\[error|Traceback|^\{", done.stderr, re.M), f"{line}\n{done.stderr}"
        if args[1] == "run":
            submission = re.search(r"submission_id: (\S+)", done.stdout).group(1)
            assert "decision: quarantined" in done.stdout
            assert "failed        order_total_not_negative: 1 rows" in done.stdout
        if args[1] == "rerun":
            assert "decision: published" in done.stdout and f"rerun_of: {submission}" in done.stdout

    draft = clone / "orders_draft.yaml"
    lint = subprocess.run(["contract-gate", "lint", str(draft)], cwd=clone, env=newcomers_shell(),
                          capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout  # the draft from the tour lints clean
    assert (clone / "dags" / "contract_gates_generated" / "orders.py").is_file()
