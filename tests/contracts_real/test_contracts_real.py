"""Contracts as teams write them (this folder): every file is valid ODCS, and ``contract-gate lint``
judges each one as EXPECTED.yaml says the gate should.

The lint half runs the CLI in-process with ``--json``, so it follows the command a user runs,
not an internal API.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema_rs
import pytest
import yaml

from contract_gate.cli.main import main as contract_gate

HERE = Path(__file__).resolve().parent
EXPECTED = yaml.safe_load((HERE / "EXPECTED.yaml").read_text(encoding="utf-8"))
CONTRACTS = sorted(path.name for path in HERE.glob("*.yaml") if path.name != "EXPECTED.yaml")


def _odcs_validator() -> jsonschema_rs.Validator:
    schema = json.loads(resources.files("open_data_contract_standard").joinpath("schema.json").read_text("utf-8"))
    return jsonschema_rs.validator_for(schema, validate_formats=False)


def test_every_contract_has_one_expectation():
    assert sorted(EXPECTED) == CONTRACTS
    assert len(CONTRACTS) >= 60


@pytest.mark.parametrize("name", CONTRACTS)
def test_contract_is_valid_odcs(name):
    document = yaml.safe_load((HERE / name).read_text(encoding="utf-8"))
    errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in _odcs_validator().iter_errors(document)]
    assert errors == []


@pytest.mark.parametrize("name", CONTRACTS)
def test_lint_judges_contract_as_expected(name, capsys):
    expected = EXPECTED[name]
    code = contract_gate(["lint", "--json", str(HERE / name)])
    [result] = json.loads(capsys.readouterr().out)["contracts"]
    errors = [f"{error.get('path')}: {error['message']}" for error in result["errors"]]
    if expected["lint"] == "refuse":
        assert code == 1, f"accepted; expected a refusal naming {expected['refuse_reason_contains']!r}"
        wanted = expected["refuse_reason_contains"].lower()
        assert any(wanted in error.lower() for error in errors), errors
        return
    assert code == 0, errors
    assert sorted(result.get("gated", ["<lint lists no gated objects>"])) == sorted(expected["gated_objects"])
    assert sorted(result.get("not_gated", ["<lint lists no objects not gated>"])) == sorted(expected["not_gated"])
