"""``contract-gate run`` / ``rerun``: the generated DAG through ``dag.test()``, exit codes by decision."""

from __future__ import annotations

import json

import pytest
from _airflow_gate import order_rows, regional_rows

from contract_gate.cli.main import main

pytestmark = pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs


@pytest.mark.slow
def test_run_prints_the_decision_and_exits_by_outcome(cli_env, capsys, tmp_path):
    gate = cli_env
    batch = gate.land("orders_cli", order_rows(start=100), "json")
    contract = str(gate.contracts / "orders.yaml")
    assert main(["run", contract, "--landing", str(batch), "--format", "json"]) == 0
    printed = capsys.readouterr().out
    assert "decision: published" in printed and "rows_published: 4" in printed
    submission = next(line.split(": ")[1] for line in printed.splitlines() if line.startswith("  submission_id: "))
    # The same batch again: same submission, already decided, exit 0 and nothing new.
    assert main(["run", contract, "--landing", str(batch), "--format", "json"]) == 0
    assert f"submission_id: {submission}" in capsys.readouterr().out
    # Re-running a published submission without --correction is refused before anything runs.
    assert main(["rerun", contract, submission, "--landing", str(batch), "--format", "json"]) == 2
    assert "refused" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2


@pytest.mark.slow
def test_run_and_rerun_print_their_decisions_as_json(cli_env, capsys):
    gate = cli_env
    contract = str(gate.contracts / "regional_daily_cases.yaml")
    bad = gate.land("regional_cli_json", regional_rows(region="J", bad=True), "json")
    assert main(["run", contract, "--landing", str(bad), "--input-format", "json", "--json"]) == 1
    rejected = json.loads(capsys.readouterr().out)["decisions"]  # stdout is one JSON document
    assert [d["outcome"] for d in rejected] == ["quarantined"]
    assert rejected[0]["target_version_after"] == rejected[0]["target_version_before"]  # target untouched

    fixed = gate.land("regional_cli_json_fixed", regional_rows(region="J"), "json")
    assert main(["rerun", contract, rejected[0]["submission_id"], "--landing", str(fixed), "--input-format", "json",
                 "--json"]) == 0
    rerun = json.loads(capsys.readouterr().out)["decisions"]
    assert [(d["outcome"], d["rerun_of"], d["rows_published"]) for d in rerun] == [
        ("published", rejected[0]["submission_id"], 3)]
