"""``contract-gate init``: a draft from a sample that lints clean and gates the sample it came from."""

from __future__ import annotations

from datetime import date

import pyarrow as pa
import pytest
import yaml
from _airflow_gate import CONTRACTS, DAGS, HOME
from deltalake import DeltaTable, write_deltalake

from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.draft import ColumnProfile, Landing, SampleProfile, draft_contract
from contract_gate.dag_factory import sync_dag_files

SECRET = "CUST-SECRET-4471"
PROFILE = SampleProfile(rows=3, columns=(
    ColumnProfile("order_id", "string", nulls=0, distinct=3, minimum="O-1", maximum="O-3", values=("O-1", "O-2", "O-3")),
    ColumnProfile("customer_id", "string", nulls=0, distinct=1, minimum=SECRET, maximum=SECRET, values=(SECRET,)),
    ColumnProfile("note", "string", nulls=2, distinct=1),
    ColumnProfile("tags", "array<string>", nulls=0, distinct=3),
))


def test_the_draft_states_what_the_sample_proves_and_writes_no_value_unless_asked(tmp_path):
    text = draft_contract(PROFILE, contract_id="urn:x:orders", object_name="orders", landing=Landing("json", path="in"))
    assert SECRET not in text
    document = yaml.safe_load(text)
    properties = {p["name"]: p for p in document["schema"][0]["properties"]}
    assert properties["order_id"] == {"name": "order_id", "physicalType": "string", "logicalType": "string",
                                      "required": True, "primaryKey": True}
    assert "required" not in properties["note"] and properties["tags"]["physicalType"] == "array<string>"
    assert "# enum: [...]  # 1 distinct values in the sample; withheld (--with-examples)" in text
    assert document["customProperties"][0]["value"]["landing"] == {"path": "in", "format": "json"}
    assert document["id"] == "urn:x:orders"
    examples = draft_contract(PROFILE, contract_id="o", object_name="orders", landing=Landing("json", path="in"),
                              with_examples=True)
    assert f'# enum: ["{SECRET}"]' in examples  # asked for: a commented suggestion, never a rule
    assert yaml.safe_load(examples) == yaml.safe_load(text) | {"id": "o"}


def test_a_hostile_column_name_stays_one_scalar(tmp_path):
    hostile = 'x"\n  - name: injected\n#'
    profile = SampleProfile(rows=1, columns=(ColumnProfile(hostile, "bigint", nulls=0, distinct=1),))
    document = yaml.safe_load(draft_contract(profile, contract_id="c", object_name="o", landing=Landing("json", path="i")))
    assert [p["name"] for p in document["schema"][0]["properties"]] == [hostile]


@pytest.mark.slow
def test_a_sample_outside_the_root_gets_a_landing_inside_it_and_the_draft_lints_clean(tmp_path, monkeypatch):
    """A sample the gate could not read as a landing (outside the server's root and every landing
    root) is not written as the landing: the draft would fail its own lint."""
    from contract_gate.cli.init_cmd import landing_of

    monkeypatch.delenv("AIRFLOW__CONTRACT_GATE__LANDING_ROOTS", raising=False)
    home, sample = tmp_path / "home", tmp_path / "downloads" / "orders.parquet"
    sample.parent.mkdir(parents=True)
    sample.write_bytes(b"")
    fields, name = landing_of(str(sample), "parquet", home)
    assert (fields, name) == ({"path": "landing/orders", "sample": str(sample)}, "orders")
    draft = home / "orders.yaml"
    home.mkdir()
    flat = SampleProfile(rows=3, columns=PROFILE.columns[:3])
    draft.write_text(draft_contract(flat, contract_id="orders", object_name=name, landing=Landing("parquet", **fields),
                                    source=str(sample)))
    assert f"# the sample, {sample}, lies outside" in draft.read_text()
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(home))
    assert main(["lint", str(draft)]) == 0

    landed = home / "lakehouse" / "in" / "orders.parquet"
    landed.parent.mkdir(parents=True)
    landed.write_bytes(b"")
    assert landing_of(str(landed), "parquet", home) == ({"path": "in/orders.parquet"}, "orders")


def test_init_on_a_delta_table_lints_clean_and_gating_the_table_publishes_it(cli_env, spark, capsys):
    table = HOME / "lakehouse" / "init_orders"
    rows = pa.table({"order_id": ["O-1", "O-2", "O-3"], "order_total": [10.5, 20.0, 3.25],
                     "currency": ["EUR", "USD", "EUR"], "order_date": [date(2025, 3, 1)] * 3,
                     "note": [None, "gift", None]})
    write_deltalake(str(table), rows)
    draft = cli_env.contracts / "init_orders.yaml"  # beside the session's contracts: dag.test() parses them all
    try:
        _init_lint_and_gate(table, draft, capsys)
    finally:
        draft.unlink(missing_ok=True)
        sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)


def _init_lint_and_gate(table, draft, capsys):
    assert main(["init", str(table), "--id", "urn:demo:init_orders", "-o", str(draft)]) == 0
    assert "EUR" not in draft.read_text(encoding="utf-8")
    compiled = compile_plans(draft)
    [plan] = compiled.gated.values()
    assert plan.object == "init_orders_gated" and plan.key == ("order_id",)
    assert {c["name"]: (c["type"], c["nullable"]) for c in plan.document["columns"]} == {
        "order_id": ("string", False), "order_total": ("double", False), "currency": ("string", False),
        "order_date": ("date", False), "note": ("string", True)}
    assert main(["lint", str(draft)]) == 0
    sync_dag_files(DAGS / "contract_gates.py", CONTRACTS)  # deploy it, as `contract-gate dags sync` would
    capsys.readouterr()
    assert main(["run", str(draft)]) == 0
    assert "decision: published" in capsys.readouterr().out
    published = DeltaTable(str(HOME / "lakehouse" / "init_orders_gated")).to_pyarrow_table()
    assert sorted(published.column("order_id").to_pylist()) == ["O-1", "O-2", "O-3"]
