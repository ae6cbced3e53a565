"""Where several teams share one gate, ``[contract_gate] tenants`` binds each contract file to the
connections and tables its team may name (contract.tenancy): team A's contract cannot read team
B's landing or references, nor run with B's connection, however it writes them. Checked by the
compiler, so by ``lint``, by every DAG build and again by every gate task before its job."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.operators.base import ContractGateBaseOperator

ROOT = Path(__file__).resolve().parents[2]
ORDERS = (ROOT / "contracts" / "orders.yaml").read_text()
GATE = "customProperties[0].value"
CATALOG_SERVER = {"  - server: local\n    type: local\n    environment: dev\n    path: lakehouse\n    format: delta\n":
                  "  - server: prod\n    type: databricks\n    catalog: main\n    schema: sales\n"}
# two teams: sales may read its own drop zone and landing folder, billing its own
TENANTS = {"sales*.yaml": {"connections": ["databricks_sales"],
                           "reads": ["main.drops.sales_*", "lakehouse/landing/sales", "s3a://drops/sales"]},
           "billing*.yaml": {"connections": ["databricks_billing"], "reads": ["main.drops.billing_*"]}}


@pytest.fixture
def tenants(monkeypatch, tmp_path):
    """The deployment's tenants, and a gate home of the test's own (relative reads resolve there)."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TENANTS", json.dumps(TENANTS))
    return TENANTS


def _contract(folder: Path, name: str, replacements: dict[str, str]) -> Path:
    text = ORDERS
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path = folder / name
    path.write_text(text)
    return path


def _landing(line: str) -> dict[str, str]:
    return {"        path: landing/orders\n        format: json": line}


def _settings(lines: str) -> dict[str, str]:
    return {'      schedule: "@hourly"': f'      schedule: "@hourly"\n{lines}'}


def _errors(path: Path) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ContractError) as error:
        compile_plan(path)
    return [(issue.path, issue.line, issue.message) for issue in error.value.issues]


def test_without_tenants_a_contract_names_any_connection_and_landing_of_its_catalog(tmp_path, monkeypatch):
    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__TENANTS", raising=False)
    path = _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.billing_invoices\n        connection: databricks_billing\n        format: delta")})
    assert compile_plan(path).document["tables"]["landing"]["name"] == "main.drops.billing_invoices"


def test_another_teams_catalog_landing_is_refused_and_its_own_is_read(tmp_path, tenants):
    theirs = _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.billing_invoices\n        format: delta")})
    [(where, line, message)] = _errors(theirs)
    assert where == f"{GATE}.landing.table" and line == 77
    assert "'main.drops.billing_invoices' is not where the contract's tenant (sales*.yaml in [contract_gate] " \
           "tenants (AIRFLOW__CONTRACT_GATE__TENANTS)) may read" in message
    assert "main.drops.sales_*" in message
    # catalog names are case-insensitive: a capitalised name of its own table is its own
    ours = _contract(tmp_path, "sales_orders.yaml", {**CATALOG_SERVER, **_landing(
        "        table: MAIN.Drops.sales_orders\n        format: delta")})
    assert compile_plan(ours).document["tables"]["landing"]["name"] == "MAIN.Drops.sales_orders"
    # the same landing is the billing team's to read
    billing = _contract(tmp_path, "billing.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.billing_invoices\n        format: delta")})
    assert compile_plan(billing).document["tables"]["landing"]["name"] == "main.drops.billing_invoices"


def test_a_landing_folder_is_read_inside_the_tenants_folders_only_links_followed(tmp_path, tenants):
    assert compile_plan(_contract(tmp_path, "sales.yaml", _landing(
        "        path: landing/sales/orders\n        format: json"))).gated
    # another team's folder in the shared lakehouse, which the server's root alone would allow
    [(where, _, message)] = _errors(_contract(tmp_path, "sales.yaml", _landing(
        "        path: landing/billing\n        format: json")))
    assert where == f"{GATE}.landing.path" and "lakehouse/landing/billing" in message
    # a folder whose name only starts like the tenant's
    assert _errors(_contract(tmp_path, "sales.yaml", _landing("        path: landing/sales_old\n        format: json")))
    # inside the tenant's folder by name, in billing's by a symbolic link
    (tmp_path / "lakehouse" / "landing" / "billing").mkdir(parents=True)
    (tmp_path / "lakehouse" / "landing" / "sales").mkdir()
    (tmp_path / "lakehouse" / "landing" / "sales" / "orders").symlink_to(tmp_path / "lakehouse" / "landing" / "billing")
    [(where, _, _)] = _errors(_contract(tmp_path, "sales.yaml", _landing(
        "        path: landing/sales/orders\n        format: json")))
    assert where == f"{GATE}.landing.path"


def test_an_object_storage_landing_is_read_under_the_tenants_uri_only(tmp_path, tenants, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__LANDING_ROOTS", "s3a://drops")
    assert compile_plan(_contract(tmp_path, "sales.yaml", _landing(
        "        path: \"s3a://drops/sales/orders\"\n        format: json"))).gated
    [(where, _, message)] = _errors(_contract(tmp_path, "sales.yaml", _landing(
        "        path: \"s3a://drops/billing/invoices\"\n        format: json")))
    assert where == f"{GATE}.landing.path" and "'s3a://drops/billing/invoices'" in message


def test_a_connection_the_tenant_does_not_hold_is_refused_at_each_place_it_is_named(tmp_path, tenants):
    path = _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.sales_orders\n        connection: databricks_billing\n        format: delta"),
        **_settings("      execution: {mode: databricks, connectionId: databricks_billing}\n"
                    "      quarantine: {table: orders_q, connection: databricks_sales}")})
    found = _errors(path)
    assert [(where, line) for where, line, _ in found] == [(f"{GATE}.landing.connection", 78),
                                                           (f"{GATE}.execution.connectionId", 86)]
    assert all("connection 'databricks_billing' is not one the contract's tenant (sales*.yaml" in message
               and message.endswith("it may name: databricks_sales") for _, _, message in found)
    allowed = _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.sales_orders\n        connection: databricks_sales\n        format: delta"),
        **_settings("      execution: {mode: databricks, connectionId: databricks_sales}")})
    assert compile_plan(allowed).connection_id == "databricks_sales"


def test_a_reference_reads_the_tenants_tables_and_the_contracts_own(tmp_path, tenants):
    query = ("    quality:\n      - type: sql\n        query: \"SELECT count(*) FROM {object} o LEFT ANTI JOIN {known} k "
             "ON o.customer_id = k.customer_id\"\n        mustBe: 0\n")
    def contract(reference: str) -> Path:
        return _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
            "        table: main.drops.sales_orders\n        format: delta"),
            **_settings(f"      references: {{known: {{table: {reference}}}}}"),
            "slaProperties:": query + "slaProperties:"})
    assert compile_plan(contract("main.drops.sales_customers")).gated
    assert compile_plan(contract("orders")).gated  # its own published target
    [(where, _, message)] = _errors(contract("drops.billing_customers"))
    assert where == f"{GATE}.references.known.table" and "'main.drops.billing_customers'" in message


def test_a_file_no_tenant_pattern_matches_is_refused_whatever_its_id_says(tmp_path, tenants):
    # the id is its author's to write; the file name is what CODEOWNERS guards
    path = _contract(tmp_path, "marketing.yaml", {"id: orders": "id: sales_orders", **CATALOG_SERVER, **_landing(
        "        table: main.drops.sales_orders\n        format: delta")})
    [(where, _, message)] = _errors(path)
    assert where == "" and "no entry of [contract_gate] tenants" in message and "'marketing.yaml'" in message


def test_a_file_several_patterns_match_may_name_what_either_allows(tmp_path, monkeypatch, tenants):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TENANTS", json.dumps(
        {**TENANTS, "*_shared.yaml": {"reads": ["main.drops.billing_invoices"]}}))
    path = _contract(tmp_path, "sales_shared.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.billing_invoices\n        format: delta")})
    assert compile_plan(path).gated


@pytest.mark.parametrize("value", ["not json", '["sales*.yaml"]', '{"sales*.yaml": {"reads": "main.*"}}',
                                   '{"sales*.yaml": {"writes": []}}'])
def test_a_malformed_setting_refuses_every_contract_and_names_the_option(tmp_path, monkeypatch, value):
    monkeypatch.setenv("AIRFLOW__CONTRACT_GATE__TENANTS", value)
    [(where, _, message)] = _errors(_contract(tmp_path, "sales.yaml", {}))
    assert where == "" and "[contract_gate] tenants (AIRFLOW__CONTRACT_GATE__TENANTS)" in message


def test_lint_names_the_file_and_yaml_path_and_the_gate_task_refuses_before_its_job(tmp_path, tenants):
    path = _contract(tmp_path, "sales.yaml", {**CATALOG_SERVER, **_landing(
        "        table: main.drops.billing_invoices\n        format: delta")})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["lint", str(path), "--json"])
    [result] = json.loads(out.getvalue())["contracts"]
    assert code == 1 and [(e["path"], e["line"]) for e in result["errors"]] == [(f"{GATE}.landing.table", 77)]
    # a worker compiles the contract again, under its own setting, before the job is built
    with pytest.raises(ContractError, match="may read"):
        ContractGateBaseOperator(task_id="t", contract=str(path)).load_plan()
