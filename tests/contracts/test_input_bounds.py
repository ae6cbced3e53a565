"""A contract is untrusted input: parsing is bounded (file size, expanded YAML values, nesting),
any contract id derives safe DAG and folder names, schedules are ones Airflow reads, and the
NaN/Infinity opt-in is checked like the other property options. (The hostile corpus, tests/contracts_hostile/yaml_*, id_*, input_*,
holds the attacks themselves; this file tests the limits around them.)"""

from __future__ import annotations

import hashlib
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.contract.loader import MAX_CONTRACT_BYTES, load_contract, load_contract_text
from contract_gate.contract.yaml_source import MAX_DEPTH, MAX_NODES
from contract_gate_plan.names import safe_name

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "contracts" / "orders.yaml"
BOMB = ROOT / "tests" / "contracts_hostile" / "yaml_alias_bomb.yaml"

_MEASURE = """
import resource, sys
from contract_gate.cli.main import main
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a regression fails here, not on the machine
code = main(["lint", sys.argv[1]])
print("maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(code)
"""


def _lint_in_child(path: Path) -> tuple[int, str, int]:
    """(exit code, output, peak resident KiB) of ``contract-gate lint path`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    peak = int(done.stdout.rsplit("maxrss_kib", 1)[1])
    return done.returncode, done.stdout, peak


def test_the_alias_bomb_is_refused_in_about_the_memory_of_an_ordinary_contract():
    code, out, bomb_peak = _lint_in_child(BOMB)
    ok_code, _, ordinary_peak = _lint_in_child(ORDERS)

    assert (code, ok_code) == (1, 0)
    assert f"FAIL  {BOMB}" in out and "line 11: f[0]: the document expands to more than 100,000" in out
    assert bomb_peak < ordinary_peak + 64 * 1024, (bomb_peak, ordinary_peak)  # KiB: not the 4.6 GB of the issue


def _contract_with(extra_lines: str) -> str:
    return ORDERS.read_text(encoding="utf-8").replace("status: active\n", f"status: active\n{extra_lines}", 1)


def test_a_document_just_under_the_value_limit_loads_and_one_over_is_refused():
    fill = MAX_NODES - 400  # the contract itself has a few hundred values
    under = _contract_with(f"x-fill: &one [0]\nx-list: [{', '.join(['*one'] * (fill // 2))}]\n")
    with pytest.raises(ContractError) as refused:
        load_contract_text(_contract_with(f"x-list: [{', '.join(['0'] * MAX_NODES)}]\n"), "big.yaml")
    [issue] = refused.value.issues
    assert (issue.file, issue.path, issue.line) == ("big.yaml", "x-list[99992]", 9)  # the value past the limit
    assert "more than 100,000 YAML values" in issue.message

    with pytest.raises(ContractError) as unknown:  # under the limit: parsed, then the schema check speaks
        load_contract_text(under, "under.yaml")
    assert {i.message for i in unknown.value.issues} == {"unknown key 'x-fill'", "unknown key 'x-list'"}


def test_nesting_is_limited_with_the_path_of_the_level_that_passes_it():
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(ContractError) as refused:
        load_contract_text(_contract_with(f"x-deep: {deep}\n"), "deep.yaml")
    [issue] = refused.value.issues
    assert issue.path == "x-deep" + "[0]" * (MAX_DEPTH - 1) and issue.line == 9
    assert f"nests deeper than {MAX_DEPTH} levels" in issue.message


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(ORDERS.read_bytes() + b"#" * (MAX_CONTRACT_BYTES + 1 - ORDERS.stat().st_size))
    exact = tmp_path / "exact.yaml"
    exact.write_bytes(big.read_bytes()[:MAX_CONTRACT_BYTES])

    with pytest.raises(ContractError) as refused:
        load_contract(big)
    assert [(i.file, i.message) for i in refused.value.issues] == \
        [(str(big), "the file is larger than 1,048,576 bytes, the limit for a contract")]
    assert load_contract(exact).model.id == "orders"  # the limit itself is allowed
    with pytest.raises(ContractError, match="larger than"):
        load_contract_text(big.read_text(encoding="utf-8"), str(big))


def test_an_endless_file_is_read_no_further_than_the_limit():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ContractError, match="larger than 1,048,576 bytes") as refused:
        load_contract("/dev/zero")
    assert refused.value.file == "/dev/zero"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB


@pytest.mark.parametrize("contract_id", ["orders", "53581432-6c55-4ba2-a65f-72344a91553a", "sales.orders_v2",
                                         "0rders", "a" * 200])
def test_ids_that_can_become_dag_ids_compile(tmp_path, contract_id):
    contract = tmp_path / "c.yaml"
    contract.write_text(ORDERS.read_text(encoding="utf-8").replace("id: orders\n", f"id: '{contract_id}'\n", 1),
                        encoding="utf-8")
    assert compile_plan(contract).document["contract"]["id"] == contract_id


@pytest.mark.parametrize("schedule", ["@hourly", "@daily", "@once", "@quarterly", "*/5 * * * *", "0 6 * * MON-FRI",
                                      "30 2 1,15 * *", "0 0 L * *"])
def test_schedules_airflow_reads_compile_for_the_gate_and_its_freshness_check(tmp_path, schedule):
    """The refused ones (``@continuous``, six fields) are the ``input_schedule_`` files of the corpus."""
    contract = tmp_path / "c.yaml"
    contract.write_text(ORDERS.read_text(encoding="utf-8").replace(
        'schedule: "@hourly"', f'schedule: "{schedule}"\n      alerts: {{freshnessSchedule: "{schedule}"}}'),
        encoding="utf-8")
    gate = compile_plan(contract).gate
    assert (gate["schedule"], gate["alerts"]["freshnessSchedule"]) == (schedule, schedule)


HOSTILE_IDS = sorted((ROOT / "tests" / "contracts_hostile").glob("id_*.yaml"))


@pytest.mark.parametrize("contract_id", ["urn:datacontract:checkout:orders", "a/b", "my contract", "ordérs", "-orders", ".hidden", "a" * 201, "a\tb"])
def test_any_id_is_kept_exactly_and_derives_safe_names(tmp_path, contract_id):
    """ODCS allows any string as an id: the plan keeps it as written; the DAG id, the gate's
    folder and its Asset come from it as names Airflow and a filesystem accept."""
    contract = tmp_path / "c.yaml"
    contract.write_text(ORDERS.read_text(encoding="utf-8").replace("id: orders\n", f'id: "{contract_id}"\n', 1),
                        encoding="utf-8")
    plan = compile_plan(contract).document
    assert plan["contract"]["id"] == contract_id
    names = plan["names"]
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", names["dag_id"]) and ".." not in names["dag_id"]
    assert names["gate"] == names["dag_id"]  # one object: the gate's folder is the DAG id
    assert names["dag_id"] != contract_id  # none of these fits as it is: slug + hash of the original
    assert names["dag_id"].endswith("_" + hashlib.sha256(contract_id.encode()).hexdigest()[:8])


@pytest.mark.parametrize("path", HOSTILE_IDS, ids=[p.name for p in HOSTILE_IDS])
def test_hostile_ids_name_nothing_outside_their_folder(path):
    gate = compile_plan(path).names.gate
    assert "/" not in gate and "\n" not in gate and not gate.startswith(".") and gate.isascii()
    assert (Path("/runs") / gate).resolve().parent == Path("/runs")


def test_a_plain_id_keeps_its_dag_id_and_two_ids_that_differ_in_refused_characters_do_not_collide():
    assert safe_name("orders") == "orders" and safe_name("orders.v2-eu") == "orders.v2-eu"
    assert safe_name("0f8fad5b-d9cb-469f-a165-70867728950e") == "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert safe_name("urn:a:b") != safe_name("urn/a/b")
    assert safe_name("urn:a:b").startswith("urn_a_b_")


def _orders_with_option(value: str, physical_type: str = "double") -> str:
    return ORDERS.read_text(encoding="utf-8").replace(
        "        physicalType: double\n",
        f"        physicalType: {physical_type}\n        customProperties:\n"
        f"          - property: allowNonFinite\n            value: {value}\n", 1)


def test_allow_non_finite_reaches_the_plan_only_on_the_column_that_says_so(tmp_path):
    contract = tmp_path / "c.yaml"
    contract.write_text(_orders_with_option("true"), encoding="utf-8")
    columns = {c["name"]: c for c in compile_plan(contract).document["columns"]}
    assert columns["order_total"]["allow_non_finite"] is True
    assert [name for name, c in columns.items() if "allow_non_finite" in c] == ["order_total"]
    contract.write_text(_orders_with_option("false"), encoding="utf-8")
    assert all("allow_non_finite" not in c for c in compile_plan(contract).document["columns"])
    assert all("allow_non_finite" not in c for c in compile_plan(ORDERS).document["columns"])  # existing plans unchanged
