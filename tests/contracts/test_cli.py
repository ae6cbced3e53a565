"""The ``contract-gate`` CLI: lint and plan, exit codes 0 (ok) / 1 (contract errors) / 2 (usage),
human output by default and JSON with --json. A few tests run the installed console script in a
subprocess (exit codes, byte-identical output across runs); the rest call its ``main`` in-process,
which is the same code without a second interpreter start per case."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contract_gate.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "contracts"
BAD = ROOT / "tests" / "contracts_bad"


def script(*args) -> subprocess.CompletedProcess:
    """The installed console script, in a subprocess."""
    executable = shutil.which("contract-gate", path=str(Path(sys.executable).parent)) or "contract-gate"
    return subprocess.run([executable, *map(str, args)], capture_output=True, text=True, check=False, cwd=ROOT)


def cli(*args) -> subprocess.CompletedProcess:
    """The same command in-process: (returncode, stdout, stderr) like ``script``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_console_script_exit_codes():
    assert script("lint", EXAMPLES).returncode == 0
    assert script("lint", BAD / "05_minimum_above_maximum.yaml").returncode == 1
    assert script("plan", "no/such.yaml").returncode == 2


def test_lint_examples_exits_0():
    result = cli("lint", EXAMPLES)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "3 ok, 0 with errors"


def test_lint_json_lists_every_file():
    result = cli("lint", EXAMPLES, "--json")
    assert result.returncode == 0
    contracts = json.loads(result.stdout)["contracts"]
    assert [(Path(c["file"]).name, c["ok"], c["errors"]) for c in contracts] == [
        ("meter_readings.yaml", True, []), ("orders.yaml", True, []), ("regional_daily_cases.yaml", True, [])]


def test_lint_bad_file_exits_1_with_path_line_and_message():
    result = cli("lint", BAD / "05_minimum_above_maximum.yaml")
    assert result.returncode == 1
    assert "line 20: schema[0].properties[1].logicalTypeOptions.minimum: minimum 100 and maximum 10 admit no value" in result.stdout


def test_lint_env_that_a_contract_lacks_is_a_contract_error():
    result = cli("lint", EXAMPLES / "orders.yaml", "--env", "prod", "--json")
    assert result.returncode == 1
    errors = json.loads(result.stdout)["contracts"][0]["errors"]
    assert errors == [{"file": str(EXAMPLES / "orders.yaml"), "line": 12, "path": "servers",
                       "message": "no server for environment 'prod'; known: dev, local"}]


@pytest.mark.parametrize("args", [("lint", "no/such/folder"), ("plan", "no/such.yaml"), ("plan", EXAMPLES),
                                  ("frobnicate",), ("plan",), ("lint", EXAMPLES, "--no-such-flag")])
def test_usage_errors_exit_2(args):
    assert cli(*args).returncode == 2


def test_plan_is_byte_identical_across_runs():
    first, second = (script("plan", EXAMPLES / "regional_daily_cases.yaml") for _ in range(2))
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert first.stdout == (ROOT / "tests" / "golden" / "regional_daily_cases.plan.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["orders", "meter_readings"])
def test_plan_prints_the_golden_plan(name):
    result = cli("plan", EXAMPLES / f"{name}.yaml")
    assert result.returncode == 0
    assert result.stdout == (ROOT / "tests" / "golden" / f"{name}.plan.json").read_text(encoding="utf-8")


def test_plan_env_resolves_catalog_tables():
    result = cli("plan", EXAMPLES / "regional_daily_cases.yaml", "--env", "prod")
    assert result.returncode == 0
    plan = json.loads(result.stdout)
    assert plan["environment"] == "prod"
    assert plan["tables"]["target"] == {"format": "delta", "kind": "table", "name": "health.surveillance.regional_daily_cases"}


def test_plan_ddl_matches_golden():
    result = cli("plan", EXAMPLES / "orders.yaml", "--ddl")
    assert result.returncode == 0
    assert result.stdout == (ROOT / "tests" / "golden" / "orders.ddl.sql").read_text(encoding="utf-8")


def test_plan_errors_as_json_exit_1():
    result = cli("plan", BAD / "22_bad_severity.yaml", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == {"file": str(BAD / "22_bad_severity.yaml"), "errors": [{
        "file": str(BAD / "22_bad_severity.yaml"), "line": 22, "path": "schema[0].properties[1].quality[0].severity",
        "message": "severity 'fatal' contradicts the DQX criticality 'warn'"}]}


def test_plan_errors_in_text_go_to_stderr():
    result = cli("plan", BAD / "22_bad_severity.yaml")
    assert result.returncode == 1 and result.stdout == ""
    assert ":22: schema[0].properties[1].quality[0].severity: severity 'fatal' contradicts" in result.stderr


def test_plan_ddl_without_gate_settings_exits_1(tmp_path):
    contract = tmp_path / "plain.yaml"
    contract.write_text((EXAMPLES / "orders.yaml").read_text().split("customProperties:")[0], encoding="utf-8")
    result = cli("plan", contract, "--ddl")
    assert result.returncode == 1
    assert "no contractGate settings" in result.stderr
    assert cli("plan", contract).returncode == 0  # plan and lint work without gate settings


def test_lint_empty_folder_is_a_usage_error(tmp_path):
    result = cli("lint", tmp_path)
    assert result.returncode == 2
    assert "no contract files" in result.stdout


def test_a_checker_crash_on_one_file_does_not_hide_the_others(tmp_path, monkeypatch):
    import contract_gate.cli.lint_cmd as lint_cmd

    real = lint_cmd.compile_plans

    def flaky(file, env=None):
        if Path(file).name == "orders.yaml":
            raise RuntimeError("boom")
        return real(file, env=env)

    monkeypatch.setattr(lint_cmd, "compile_plans", flaky)
    result = cli("lint", EXAMPLES, "--json")
    assert result.returncode == 2
    contracts = {Path(c["file"]).name: c for c in json.loads(result.stdout)["contracts"]}
    assert contracts["orders.yaml"]["errors"][0]["message"] == \
        "internal error while checking this contract: RuntimeError: boom"
    assert contracts["meter_readings.yaml"]["ok"] and contracts["regional_daily_cases.yaml"]["ok"]
