"""ODCS foreign keys compile to ``<columns>.references`` rules naming the referenced object's
published target; a reference that cannot be resolved is a lint error at its YAML path."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate_plan.document import PlanError, check_document

PARENT = """\
apiVersion: v3.1.0
kind: DataContract
id: {id}
version: 1.0.0
status: active
schema:
  - name: {object}
    physicalType: table
    properties:
      - {{name: customer_id, physicalType: bigint, logicalType: integer, primaryKey: true}}
      - {{name: region, physicalType: string, logicalType: string, primaryKey: true}}
{gate}"""
GATE = "customProperties:\n  - property: contractGate\n    value:\n      landing: {path: landing/{object}}\n"

CHILD = """\
apiVersion: v3.1.0
kind: DataContract
id: shop_orders
version: 1.0.0
status: active
schema:
  - name: orders
    physicalType: table
    properties:
      - {{name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}}
      - name: customer_id
        physicalType: {customer_type}
        logicalType: integer
{property_relationships}      - {{name: region, physicalType: string, logicalType: string}}
{object_relationships}customProperties:
  - property: contractGate
    value:
      landing: {{path: landing/orders}}
"""


def deployment(tmp_path: Path, child: str, *parents: tuple[str, str, bool]) -> Path:
    for contract_id, object_name, gated in parents:
        gate = GATE.replace("{object}", object_name) if gated else ""
        (tmp_path / f"{contract_id}.yaml").write_text(PARENT.format(id=contract_id, object=object_name, gate=gate))
    (tmp_path / "orders.yaml").write_text(child)
    return tmp_path / "orders.yaml"


def child(to: str = "customers.customer_id", customer_type: str = "bigint", object_level: str = "",
          extra: str = "") -> str:
    relationships = f"        relationships:\n          - to: {to}\n{extra}" if to else ""
    return CHILD.format(customer_type=customer_type, property_relationships=relationships,
                        object_relationships=object_level)


def errors(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        compile_plans(path)
    return [(issue.path, issue.message) for issue in caught.value.issues]


def references(path: Path) -> list[dict]:
    return [r for r in compile_plans(path).plan().document["rules"] if r["kind"] == "references"]


def test_a_property_reference_to_another_contracts_object_names_its_target(tmp_path):
    [rule] = references(deployment(tmp_path, child(), ("crm_customers", "customers", True)))
    assert rule["id"] == "customer_id.references" and rule["columns"] == ["customer_id"]
    assert rule["reference"] == {"contract": "crm_customers", "object": "customers", "columns": ["customer_id"],
                                 "table": {"kind": "path", "path": "lakehouse/customers", "format": "delta"}}
    assert rule["severity"] == "error" and rule["enforceable"] is False  # no CHECK: it reads another table


def test_a_composite_object_level_reference(tmp_path):
    object_level = ("    relationships:\n      - from: [orders.customer_id, orders.region]\n"
                    "        to: [customers.customer_id, customers.region]\n")
    [rule] = references(deployment(tmp_path, child(to="", object_level=object_level),
                                   ("crm_customers", "customers", True)))
    assert rule["id"] == "customer_id.region.references" and rule["columns"] == ["customer_id", "region"]
    assert rule["reference"]["columns"] == ["customer_id", "region"]


def test_the_contract_is_named_when_two_have_the_object(tmp_path):
    named = "            customProperties:\n              - {property: contractGate, value: {contract: crm_b}}\n"
    path = deployment(tmp_path, child(extra=named), ("crm_a", "customers", True), ("crm_b", "customers", True))
    assert references(path)[0]["reference"]["contract"] == "crm_b"
    (tmp_path / "orders.yaml").write_text(child())
    [(where, message)] = errors(tmp_path / "orders.yaml")
    assert where == "schema[0].properties[1].relationships[0].to" and "ambiguous" in message


@pytest.mark.parametrize("to, parents, message", [
    ("customers.customer_id", [], "no gated object 'customers'"),
    ("customers.customer_id", [("crm_customers", "customers", False)], "no gated object 'customers'"),
    ("customers.nope", [("crm_customers", "customers", True)], "'customers' has no property 'nope'"),
    ("secrets.customer_id", [("crm_customers", "customers", True)], "no gated object 'secrets'"),
])
def test_a_reference_that_cannot_be_resolved_is_a_lint_error_at_its_path(tmp_path, to, parents, message):
    found = errors(deployment(tmp_path, child(to=to), *parents))
    assert any(where == "schema[0].properties[1].relationships[0].to" and message in text for where, text in found), found


def test_the_key_types_must_match(tmp_path):
    found = errors(deployment(tmp_path, child(customer_type="string"), ("crm_customers", "customers", True)))
    assert any("'customer_id' is string, 'customer_id' is bigint" in text for _, text in found)


def test_a_reference_reaches_only_contract_files_of_its_own_folder(tmp_path):
    """A path or a URL in a reference is no way out of the deployment: only object names resolve."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.yaml").write_text(PARENT.format(id="crm", object="customers", gate=GATE.replace("{object}", "customers")))
    inside = tmp_path / "inside"
    inside.mkdir()
    for to in ("../outside/c.customers.customer_id", "customers.customer_id"):
        (inside / "orders.yaml").write_text(child(to=f"'{to}'"))
        assert errors(inside / "orders.yaml")  # the ODCS schema refuses the first, the folder lacks the second


def test_a_hand_made_reference_rule_is_refused_by_the_plans_check(tmp_path):
    plan = compile_plans(deployment(tmp_path, child(), ("crm_customers", "customers", True))).plan().document
    rule = next(r for r in plan["rules"] if r["kind"] == "references")
    rule["predicate"] = "TRUE"
    with pytest.raises(PlanError, match="predicate is the compiler's own"):
        check_document(plan)
    del rule["reference"]
    with pytest.raises(PlanError, match="a reference is given with kind 'references'"):
        check_document(plan)


@pytest.mark.parametrize("to", ["customers.customer_id; DROP TABLE customers", "customers.`customer_id`",
                                "/etc/passwd#/schema/customers", "customers.customer_id' OR '1'='1"])
def test_injection_in_a_reference_is_refused_before_anything_reads_it(tmp_path, to):
    found = errors(deployment(tmp_path, child(to=json_string(to)), ("crm_customers", "customers", True)))
    assert any("relationships[0]" in where for where, _ in found), found


def test_a_hostile_column_name_stays_one_quoted_identifier_in_the_predicate(tmp_path):
    text = child().replace("      - name: customer_id\n", "      - name: customer_id\n        physicalName: \"c`) OR TRUE OR (`x\"\n")
    [rule] = references(deployment(tmp_path, text, ("crm_customers", "customers", True)))
    assert rule["columns"] == ["c`) OR TRUE OR (`x"]
    assert rule["predicate"].startswith("(`c``) OR TRUE OR (``x` IS NULL OR `__contract_gate_found_")


def json_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
