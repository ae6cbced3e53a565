"""The Databricks access boundary: a contract's ODCS roles become Unity Catalog GRANTs.

Run against a local emulation of the Databricks SQL Statement Execution API
(``jobs_api_emulator``: it parses GRANT / REVOKE / SHOW GRANTS with Databricks' identifier
quoting and keeps the grants they make), not a Databricks workspace. The statements go through
the gate's ``DatabricksWorkspaceHook`` (``databricks-sdk``) over HTTP, exactly as the runner sends
them, and the emulator reads each request with the SDK's own models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _airflow_gate import REPO
from jobs_api_emulator import JobsApiEmulator

from contract_gate.contract.compiler import compile_plan
from contract_gate.runners.base import GateJob, GateJobError
from contract_gate_plan.model import Plan

HOSTILE_ROLE = "evil` TO `mallory`; GRANT ALL PRIVILEGES ON CATALOG `main"
SERVER = """servers:
  - server: prod
    type: databricks
    environment: prod
    catalog: main
    schema: sales
roles:
  - role: analysts
    access: read
  - role: "{hostile}"
    access: read
  - role: orders-producers@example.com
    access: write
"""


def _plan(tmp_path: Path) -> dict:
    """The orders contract on a Unity Catalog server, with a consumer, a hostile consumer role
    name and the producing team as owner."""
    text = (REPO / "contracts" / "orders.yaml").read_text()
    start, end = text.index("servers:"), text.index("schema:")
    text = text[:start] + SERVER.format(hostile=HOSTILE_ROLE.replace('"', '\\"')) + text[end:]
    path = tmp_path / "orders.yaml"
    path.write_text(text)
    return compile_plan(path)


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    with JobsApiEmulator(tmp_path / "workspace", tmp_path) as api:
        monkeypatch.setenv("AIRFLOW_CONN_DATABRICKS_EMULATOR", api.connection(
            volume="/Volumes/main/contract_gate/work", existing_cluster_id="c1", warehouse_id="wh-1",
            principal="contract-gate-sp"))
        yield api


def _grant_after_run(tmp_path: Path, plan: Plan, result: dict | None = None) -> None:
    """What the runner does when a Databricks run of ``plan`` has succeeded."""
    from contract_gate.runners.databricks import DatabricksRunner

    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    (workdir / "plan.json").write_text(json.dumps(plan.document))
    job = GateJob("publish", {"--plan": workdir / "plan.json"}, workdir)
    runner = DatabricksRunner(conn_id="databricks_emulator")
    runner.grant_access(runner.hook(), job, result or {})


def test_consumers_select_the_target_only_and_the_quarantine_is_the_gates_and_the_owners(tmp_path, warehouse):
    plan = _plan(tmp_path)
    assert plan.document["access"] == {"consumers": ["analysts", HOSTILE_ROLE], "owners": ["orders-producers@example.com"]}
    warehouse.catalog_objects |= {("CATALOG", "main"), ("SCHEMA", "main.sales"), ("TABLE", "main.sales.orders"),
                                  ("TABLE", "main.sales.orders_quarantine"),
                                  ("SCHEMA", "main._contract_gate_candidates"),
                                  ("TABLE", "main._contract_gate_candidates.orders__s1")}
    # grants somebody made by hand: the boundary takes back what reads the quarantine or candidates
    warehouse.grants[("TABLE", "main.sales.orders_quarantine")] = {"analysts": {"SELECT"}}
    warehouse.grants[("SCHEMA", "main._contract_gate_candidates")] = {
        "analysts": {"SELECT", "USE SCHEMA"}, "meter-producers": {"USE SCHEMA"}}  # another contract's owner

    _grant_after_run(tmp_path, plan, {"candidate": {"kind": "table", "name": "main._contract_gate_candidates.orders__s1"}})

    grants = warehouse.grants
    owner, gate = "orders-producers@example.com", "contract-gate-sp"
    assert grants[("TABLE", "main.sales.orders")] == {
        "analysts": {"SELECT"}, HOSTILE_ROLE: {"SELECT"}, owner: {"SELECT"}, gate: {"SELECT", "MODIFY"}}
    assert grants[("TABLE", "main.sales.orders_quarantine")] == {owner: {"SELECT"}, gate: {"SELECT", "MODIFY"}}
    assert grants[("SCHEMA", "main._contract_gate_candidates")] == {
        gate: {"USE SCHEMA", "CREATE TABLE", "SELECT", "MODIFY"}, owner: {"USE SCHEMA"},
        "analysts": {"USE SCHEMA"}, "meter-producers": {"USE SCHEMA"}}
    assert grants[("TABLE", "main._contract_gate_candidates.orders__s1")] == {owner: {"SELECT"}}
    assert grants[("CATALOG", "main")] == {p: {"USE CATALOG"} for p in ("analysts", HOSTILE_ROLE, owner, gate)}
    assert grants[("SCHEMA", "main.sales")] == {p: {"USE SCHEMA"} for p in ("analysts", HOSTILE_ROLE, owner, gate)}
    everyone = {p for held in grants.values() for p in held}
    assert "mallory" not in everyone  # the hostile name stayed one principal
    assert "REVOKE SELECT ON TABLE `main`.`sales`.`orders_quarantine` FROM `analysts`" in warehouse.statements
    assert "REVOKE SELECT ON SCHEMA `main`.`_contract_gate_candidates` FROM `analysts`" in warehouse.statements
    assert ("GRANT SELECT ON TABLE `main`.`sales`.`orders` TO "
            "`evil`` TO ``mallory``; GRANT ALL PRIVILEGES ON CATALOG ``main`" in warehouse.statements)


def test_tables_not_created_yet_are_granted_by_a_later_run(tmp_path, warehouse):
    plan = _plan(tmp_path)
    warehouse.catalog_objects |= {("CATALOG", "main"), ("SCHEMA", "main.sales"),
                                  ("SCHEMA", "main._contract_gate_candidates")}

    _grant_after_run(tmp_path, plan)  # stage+validate: neither the target nor the quarantine exists
    assert ("TABLE", "main.sales.orders") not in warehouse.grants
    warehouse.catalog_objects.add(("TABLE", "main.sales.orders"))
    _grant_after_run(tmp_path, plan)  # the publish created the target

    assert warehouse.grants[("TABLE", "main.sales.orders")]["analysts"] == {"SELECT"}


def test_catalog_tables_without_a_warehouse_for_the_grants_fail_the_task(tmp_path, monkeypatch):
    from contract_gate.runners.databricks import DatabricksRunner

    monkeypatch.setenv("AIRFLOW_CONN_DATABRICKS_BARE", json.dumps({"conn_type": "databricks", "host": "127.0.0.1",
        "extra": {"contract_gate": {"volume": "/Volumes/main/contract_gate/work", "existing_cluster_id": "c1"}}}))
    (tmp_path / "plan.json").write_text(json.dumps(_plan(tmp_path).document))
    runner = DatabricksRunner(conn_id="databricks_bare")

    with pytest.raises(GateJobError, match="set warehouse_id"):
        runner.grant_access(None, GateJob("publish", {"--plan": tmp_path / "plan.json"}, tmp_path), {})


def test_an_access_the_gate_cannot_grant_is_a_contract_error(tmp_path):
    from contract_gate.contract.errors import ContractError

    text = (REPO / "contracts" / "orders.yaml").read_text().replace(
        "customProperties:\n  - property: contractGate", "roles:\n  - role: admins\n    access: admin\n"
        "customProperties:\n  - property: contractGate", 1)
    (tmp_path / "c.yaml").write_text(text)

    with pytest.raises(ContractError) as error:
        compile_plan(tmp_path / "c.yaml")
    [issue] = error.value.issues
    assert issue.path == "roles[0].access" and "'read'" in issue.message and "'write'" in issue.message
