"""Where a contract may put its tables (contract.table_locations) and which tables two contracts
may not both claim (contract.claims), checked by ``lint`` without Spark. The runtime side of the
same boundary, on real Delta tables, is tests/gate_steps/test_table_ownership.py."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError

ROOT = Path(__file__).resolve().parents[2]
ORDERS = (ROOT / "contracts" / "orders.yaml").read_text()


def _lint(target: Path) -> tuple[int, dict[str, list[dict]]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["lint", str(target), "--json"])
    return code, {Path(c["file"]).name: c["errors"] for c in json.loads(out.getvalue())["contracts"]}


def _contract(tmp_path: Path, name: str, replacements: dict[str, str], base: str = ORDERS) -> Path:
    text = base
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _gate(settings: str) -> dict[str, str]:
    """Replacements that add gate settings lines to the orders contract."""
    return {"      schedule: \"@hourly\"": f"      schedule: \"@hourly\"\n{settings}"}


def _errors(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as error:
        compile_plan(path)
    return [(issue.path, issue.message) for issue in error.value.issues]


def test_the_schema_name_with_dot_dot_is_refused_at_its_yaml_path(tmp_path):
    path = _contract(tmp_path, "c", {"  - name: orders\n": '  - name: "../../../tmp/x"\n'})

    message = dict(_errors(path))["schema[0].name"]  # (its SLA element names no column of it either)
    assert "'../../../tmp/x'" in message and "[A-Za-z_][A-Za-z0-9_]*" in message


@pytest.mark.parametrize("given", ["/tmp/elsewhere/orders_q", "../orders_q", "file:///tmp/orders_q",
                                   "s3a://other-bucket/orders_q"])
def test_a_quarantine_path_outside_the_root_is_refused(tmp_path, given):
    path = _contract(tmp_path, "c", _gate(f"      quarantine: {{path: \"{given}\"}}"))

    [(where, message)] = _errors(path)
    assert where == "customProperties[0].value.quarantine.path"
    assert given in message and ("outside the server's root 'lakehouse'" in message or "'..'" in message)


def test_paths_under_the_root_and_uris_under_a_uri_root_are_accepted(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_ROOTS", "s3a://lake")
    inside = _contract(tmp_path, "inside", _gate("      quarantine: {path: rejected/orders}"))
    assert compile_plan(inside).document["tables"]["quarantine"]["path"] == "lakehouse/rejected/orders"
    uri = _contract(tmp_path, "uri", {"    path: lakehouse\n": "    path: s3a://lake/gold\n",
                                      "        path: landing/orders": "        path: s3a://lake/gold/landing/orders",
                                      **_gate("      quarantine: {path: \"s3a://lake/gold/q/orders\"}")})
    tables = compile_plan(uri).document["tables"]
    assert (tables["target"]["path"], tables["quarantine"]["path"]) == ("s3a://lake/gold/orders", "s3a://lake/gold/q/orders")
    prefix = _contract(tmp_path, "prefix", {"    path: lakehouse\n": "    path: s3a://lake/gold\n",
                                            "        path: landing/orders": "        path: landing/orders",
                                            **_gate("      quarantine: {path: \"s3a://lake/golden/orders\"}")})
    assert [where for where, _ in _errors(prefix)] == ["customProperties[0].value.quarantine.path"]


def test_an_absolute_server_root_must_be_listed_by_the_deployment(tmp_path, monkeypatch):
    path = _contract(tmp_path, "c", {"    path: lakehouse\n": "    path: /\n",
                                     "        path: landing/orders": "        path: srv/landing/orders",
                                     **_gate("      target: {path: etc/cron.d/orders}")})
    [(where, message)] = _errors(path)
    assert where == "servers[0].path" and "[contract_gate] roots" in message

    monkeypatch.setenv("CONTRACT_GATE_ROOTS", f"{tmp_path}/lake, s3a://lake")
    listed = _contract(tmp_path, "d", {"    path: lakehouse\n": f"    path: {tmp_path}/lake/gold\n"})
    assert compile_plan(listed).document["tables"]["target"]["path"] == f"{tmp_path}/lake/gold/orders"
    assert [where for where, _ in _errors(path)] == ["servers[0].path"]


def test_a_symbolic_link_out_of_the_root_is_refused(tmp_path, monkeypatch):
    home, outside = tmp_path / "home", tmp_path / "outside"
    (home / "lakehouse").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, home / "lakehouse" / "shortcut")
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(home))
    path = _contract(tmp_path, "c", _gate("      quarantine: {path: shortcut/orders_q}"))

    [(where, message)] = _errors(path)
    assert where == "customProperties[0].value.quarantine.path" and "through a symbolic link" in message


def test_the_landing_stays_under_the_root_or_a_listed_landing_root(tmp_path, monkeypatch):
    path = _contract(tmp_path, "c", {"        path: landing/orders": "        path: /srv/drops/orders"})
    [(where, message)] = _errors(path)
    assert where == "customProperties[0].value.landing.path" and "[contract_gate] landing_roots" in message

    monkeypatch.setenv("CONTRACT_GATE_LANDING_ROOTS", "s3a://drops, /srv/drops")
    assert compile_plan(path).document["tables"]["landing"]["path"] == "/srv/drops/orders"


def test_a_landing_linked_out_of_the_root_must_land_in_a_listed_landing_root(tmp_path, monkeypatch):
    home, drops = tmp_path / "home", tmp_path / "drops"
    (home / "lakehouse").mkdir(parents=True)
    (drops / "orders").mkdir(parents=True)
    os.symlink(drops, home / "lakehouse" / "landing")
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(home))
    path = _contract(tmp_path, "c", {})

    assert [where for where, _ in _errors(path)] == ["customProperties[0].value.landing.path"]
    monkeypatch.setenv("CONTRACT_GATE_LANDING_ROOTS", str(drops))
    assert compile_plan(path).document["tables"]["landing"]["path"] == "lakehouse/landing/orders"


def test_a_contracts_own_tables_may_not_overlap(tmp_path):
    path = _contract(tmp_path, "c", _gate("      quarantine: {path: orders/rejected}"))

    [(where, message)] = _errors(path)
    assert where == "customProperties[0].value.quarantine.path"
    assert message.startswith("the quarantine lakehouse/orders/rejected overlaps the contract's own target lakehouse/orders")


def test_catalog_tables_stay_in_the_servers_catalog_and_names_are_identifiers(tmp_path):
    server = {"  - server: local\n    type: local\n    environment: dev\n    path: lakehouse\n    format: delta\n":
              "  - server: prod\n    type: databricks\n    catalog: main\n    schema: sales\n"}
    elsewhere = _contract(tmp_path, "a", {**server, **_gate("      quarantine: {table: finance.ledger.orders_q}")})
    [(where, message)] = _errors(elsewhere)
    assert where == "customProperties[0].value.quarantine.table" and "outside the server's catalog 'main'" in message
    injected = _contract(tmp_path, "b", {**server, **_gate("      target: {table: \"orders` ; DROP TABLE t; --\"}")})
    [(where, message)] = _errors(injected)
    assert where == "customProperties[0].value.target.table" and "plain identifier" in message
    candidates = _contract(tmp_path, "c", {**server, "        path: landing/orders\n        format: json":
                                           "        table: main._contract_gate_candidates.orders__s1\n        format: delta"})
    found = _errors(candidates)
    assert {where for where, _ in found} == {"customProperties[0].value.landing.table"}
    assert any("overlaps the contract's own candidate folder" in message for _, message in found)
    assert any("lies inside '_contract_gate_candidates', a name the gate keeps for itself" in message
               for _, message in found)
    # Unity Catalog's names may hold a hyphen; a period, a space or a back-quote would change every name made there
    hyphen = _contract(tmp_path, "d", {"  - server: local\n    type: local\n    environment: dev\n    path: lakehouse\n"
                                       "    format: delta\n": "  - server: prod\n    type: databricks\n"
                                       "    catalog: dev-lake\n    schema: sales-eu\n"})
    assert compile_plan(hyphen).document["tables"]["target"]["name"] == "dev-lake.sales-eu.orders"
    for catalog in ("dev lake", "dev.lake", "dev`lake", "dev/lake"):
        spaced = _contract(tmp_path, "e", {**server, "    catalog: main\n": f"    catalog: \"{catalog}\"\n"})
        assert [where for where, _ in _errors(spaced)] == ["servers[0].catalog"], catalog


def test_lint_of_a_folder_fails_both_contracts_that_claim_one_table_naming_each_other(tmp_path):
    orders = _contract(tmp_path, "orders", {})
    evil = _contract(tmp_path, "evil", {"id: orders\n": "id: evil\n", "  - name: orders\n": "  - name: evil\n",
                                        "        path: landing/orders": "        path: landing/evil",
                                        "element: orders.order_timestamp": "element: evil.order_timestamp",
                                        **_gate("      quarantine: {table: orders}")})

    code, errors = _lint(tmp_path)

    assert code == 1
    [mine] = errors["evil.yaml"]
    assert (mine["path"], mine["line"]) == ("customProperties[0].value.quarantine.table", 86)
    assert f"is also claimed by {orders} (schema[0].name, line 19) as its target" in mine["message"]
    [theirs] = errors["orders.yaml"]
    assert (theirs["path"], theirs["line"]) == ("schema[0].name", 19)
    assert f"is also claimed by {evil} (customProperties[0].value.quarantine.table, line 86)" in theirs["message"]


def test_the_same_id_and_a_table_nested_in_another_are_claims_too(tmp_path):
    _contract(tmp_path, "orders", {})
    _contract(tmp_path, "copy", {"  - name: orders\n": "  - name: orders_copy\n",
                                 "element: orders.order_timestamp": "element: orders_copy.order_timestamp"})
    _contract(tmp_path, "nested", {"id: orders\n": "id: nested\n", "  - name: orders\n": "  - name: nested\n",
                                   "element: orders.order_timestamp": "element: nested.order_timestamp",
                                   "        path: landing/orders": "        path: landing/nested",
                                   **_gate("      target: {path: orders/inner}")})
    _contract(tmp_path, "reader", {"id: orders\n": "id: reader\n", "  - name: orders\n": "  - name: reader\n",
                                   "element: orders.order_timestamp": "element: reader.order_timestamp",
                                   "        path: landing/orders": "        path: orders_quarantine"})
    _contract(tmp_path, "consumer", {"id: orders\n": "id: consumer\n", "  - name: orders\n": "  - name: consumer\n",
                                     "element: orders.order_timestamp": "element: consumer.order_timestamp",
                                     "        path: landing/orders": "        path: orders"})

    code, errors = _lint(tmp_path)

    assert code == 1
    assert [e["path"] for e in errors["copy.yaml"]] == ["id"]  # other tables differ: only the id clashes
    assert "the id orders is also claimed by" in errors["copy.yaml"][0]["message"]
    assert [e["path"] for e in errors["nested.yaml"]] == ["customProperties[0].value.target.path"]
    assert [e["path"] for e in errors["reader.yaml"]] == ["customProperties[0].value.landing.path"]
    assert "as its quarantine" in errors["reader.yaml"][0]["message"]
    assert errors["consumer.yaml"] == []  # reading a published target is a pipeline, not a clash
    assert sorted(e["path"] for e in errors["orders.yaml"]) == ["id", "schema[0].name", "schema[0].name"]


def test_a_query_reference_to_another_contracts_quarantine_is_a_claim_and_to_its_target_is_not(tmp_path):
    """A count per guessed value over another team's quarantine is an oracle of its rejected rows."""
    _contract(tmp_path, "orders", {})
    query = ("    quality:\n      - type: sql\n        query: \"SELECT count(*) FROM {object} o JOIN {peek} p "
             "ON o.order_id = p.order_id\"\n        mustBe: 0\n")

    def reader(name: str, table: str) -> None:
        _contract(tmp_path, name, {"id: orders\n": f"id: {name}\n", "  - name: orders\n": f"  - name: {name}\n",
                                   "element: orders.order_timestamp": f"element: {name}.order_timestamp",
                                   "        path: landing/orders": f"        path: landing/{name}",
                                   "slaProperties:": query + "slaProperties:",
                                   **_gate(f"      references: {{peek: {{table: {table}}}}}")})

    reader("prober", "orders_quarantine")
    reader("joiner", "orders")

    code, errors = _lint(tmp_path)

    assert code == 1
    [mine] = errors["prober.yaml"]
    assert mine["path"] == "customProperties[0].value.references.peek.table"
    assert "as its quarantine" in mine["message"]
    [theirs] = errors["orders.yaml"]
    assert "prober.yaml (customProperties[0].value.references.peek.table, line" in theirs["message"]
    assert theirs["message"].split(") as its ")[1].startswith("reference")
    assert errors["joiner.yaml"] == []  # the published target is for consumers to read


def test_the_example_contracts_claim_nothing_twice():
    code, errors = _lint(ROOT / "contracts")
    assert code == 0 and all(found == [] for found in errors.values())
