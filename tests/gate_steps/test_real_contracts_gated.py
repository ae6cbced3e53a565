"""Contracts as teams write them (tests/contracts_real), gated end to end on generated data.

Each case compiles the contract (``compile_plans(...).gated``: every gated object of a contract of
several), writes a batch with ``generate.py`` in the landing format the contract names, and runs
the steps the gate's tasks run, through ``gate_job`` as the operators call it: the
``stage+validate+batch_keys`` job, the branch, then ``publish``, ``quarantine`` or ``split``, and
the decision record. Tables are under a temporary ``CONTRACT_GATE_HOME``, where the plans'
relative paths resolve. A valid batch publishes exactly its rows; a batch with one planted invalid
row is quarantined whole under ``reject_batch`` (the target's Delta version and rows unchanged)
and split under ``split_rows``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from _gate_plans import ROOT
from contract_gate import decisions
from contract_gate.contract.compiler import compile_plans
from contract_gate.operators.branch import PUBLISH, QUARANTINE, SPLIT, decide
from contract_gate.operators.record import verdict
from contract_gate.operators.validate import summarize
from contract_gate_plan.model import load_plan
from contract_gate_spark.commands.gate_job import main as gate_job

REAL = ROOT / "tests" / "contracts_real"
sys.path.insert(0, str(REAL))
from generate import rows, write_landing  # noqa: E402

pytestmark = pytest.mark.slow  # every case runs Spark jobs end to end; the module takes minutes

COUNT = 6
ADDRESSES = [{"street": "Dam 1", "city": "Amsterdam", "postal_code": "1012 JS", "country": "NL"},
             {"street": None, "city": "Gent", "postal_code": "9000AB", "country": "BE"},
             {"street": "Zeil 5", "city": "Frankfurt", "postal_code": None, "country": "DE"}]
LINES = [[{"sku": "SKU-00001", "qty": 2, "unit_price": 9.5}],
         [{"sku": "SKU-00002", "qty": 1, "unit_price": 0.0}, {"sku": "SKU-12345", "qty": 3, "unit_price": 1.25}]]

PROFILES = [{"age": 30, "country": "NL"}, None, {"age": None, "country": "BE"}, {"age": 13, "country": None}]
STS = [{"connection_test": "SUCCESS", "key_list": {"^[0-5]$": {"key": "00000001"}}},
       {"connection_test": "FAIL", "key_list": {"^[0-5]$": None}}]

# (contract, gated object): what it shows, and the values its rules need (the generator's own
# values fit every other column).
VALID = {
    ("types_postgres_customers.yaml", "customers"):  # uuid, varchar(n), numeric, timestamptz, jsonb
        {"preferences": ['{"newsletter": true}', "[1, 2]", None]},
    ("types_snowflake_subscriptions.yaml", "subscriptions"):  # NUMBER(38,0), TIMESTAMP_NTZ, VARIANT; physicalName
        {"attributes": ['{"seats": 3}', None]},
    ("types_kafka_avro_clicks.yaml", "clicks"): {},  # Avro long, float, bytes; JSON lines; no key
    ("logical_only_customers.yaml", "loyalty_members"): {"tier": ["bronze", "silver", "gold", None]},
    ("nested_object_address_customers.yaml", "shop_customers"): {"address": ADDRESSES},
    ("nested_array_of_objects_orders.yaml", "order_documents"): {"lines": LINES},
    ("physname_uppercase_columns.yaml", "materials"): {},  # MARA with MATNR, MTART, BRGEW
    ("multi_two_objects_per_object_settings.yaml", "order_headers"): {},
    ("multi_two_objects_per_object_settings.yaml", "order_lines"): {},
    ("id_urn_versioned_customers.yaml", "customers_clean"): {"segment": ["retail", "sme", "corporate"]},
    ("id_uuid_shipments.yaml", "crm_customer_export"): {},
    ("nullvalid_valid_values_status.yaml", "deliveries"): {"status": ["planned", None, "delivered"]},
    ("compkey_no_positions_stock.yaml", "stock_movements"): {"warehouse": ["AMS", "RTM"]},  # a key in declaration order
    ("engine_soda_warn.yaml", "crm_opportunities"): {},  # a soda check, listed as not_evaluated
    ("sql_model_placeholder_orders.yaml", "checkout_orders"): {},  # SQL checks over {model}
    ("nested_quality_dqx_interactions.yaml", "user_interactions"):  # DQX checks and a metric on nested fields
        {"interaction_type": ["click", "view", "purchase"], "user_profile": PROFILES,
         "lines": [[{"sku": line["sku"], "qty": line["qty"]} for line in lines] for lines in LINES]},
    ("nested_field_names_json_schema_feed.yaml", "sts_feed"):  # a field named ^[0-5]$; a free-form object
        {"id": ["12345678", "87654321"], "array_test_object": [[{"key": "k", "value": "v"}]], "sts_data": STS,
         "attributes": [{"colour": "red", "size": "42"}, {}, None]},
    ("nested_field_names_with_spaces_receipts.yaml", "pos_receipts"):  # names Delta keeps with column mapping
        {"totals": [{"Net amount (EUR)": 12.5, "VAT; rate": "21%"}, {"Net amount (EUR)": 0.0, "VAT; rate": None}]},
}
# (contract, object): (one value of the batch made invalid, the rule that fails, the branch)
PLANTED = {
    ("nullvalid_valid_values_status.yaml", "deliveries"):
        ({"status": ["planned", None, "lost", "delivered", "planned", None]}, "status.invalidValues", QUARANTINE),
    ("nested_array_of_objects_orders.yaml", "order_documents"):
        ({"lines": [*LINES, [{"sku": "sku-1", "qty": 1, "unit_price": 1.0}], *LINES, LINES[0]]},
         "lines[].sku.pattern", QUARANTINE),
    ("logical_only_customers.yaml", "loyalty_members"):
        ({"tier": ["gold", "silver", "bronze", "platinum", None, "gold"]}, "tier.enum", QUARANTINE),
    ("multi_two_objects_per_object_settings.yaml", "order_lines"):
        ({"quantity": [1, 2, 0, 4, 5, 6]}, "quantity.minimum", SPLIT),
    ("nested_quality_dqx_interactions.yaml", "user_interactions"):
        ({"user_profile": [*PROFILES, {"age": 40, "country": "nl"}, PROFILES[0]]}, "user_profile.country.regex_match",
         QUARANTINE),
    ("nested_field_names_json_schema_feed.yaml", "sts_feed"):
        ({"sts_data": [*STS, {"connection_test": "SUCCESS", "key_list": {"^[0-5]$": {"key": "0000001x"}}}, *STS, STS[0]]},
         "sts_data.key_list.^[0-5]$.key.pattern", QUARANTINE),
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    return tmp_path


def _plan(contract: str, name: str) -> dict:
    compiled = compile_plans(REAL / contract)
    assert name in compiled.gated, f"{contract}: {name} is not gated ({compiled.not_gated})"
    return compiled.gated[name].document


def _land(plan: dict, home: Path, values: dict, start: int = 0) -> list[dict]:
    """Write a generated batch where the plan's landing is; return its rows."""
    landing = plan["tables"]["landing"]
    assert landing["kind"] == "path" and not Path(landing["path"]).is_absolute()
    folder = home / landing["path"]
    for old in folder.glob("part-*"):
        old.unlink()
    write_landing(folder, plan["columns"], COUNT, fmt=landing["format"], values=values, start=start)
    return rows(plan["columns"], COUNT, values=values, start=start)


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _gate(plan: dict, home: Path, submission_id: str) -> tuple[dict, str, dict]:
    """(the report, the branch, the recorded decision) of one submission."""
    work = home / "work" / submission_id
    work.mkdir(parents=True)
    plan_file, stage, report_path = work / "plan.json", work / "stage.json", work / "report.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    common = ["--plan", str(plan_file), "--submission-id", submission_id]
    assert gate_job(["stage+validate+batch_keys", *common, "--result", str(stage), "--report", str(report_path)]) == 0
    staged, report = _json(stage), _json(report_path)
    summary = summarize(report, report_path, staged)
    branch, _ = decide(load_plan(plan), summary)
    step = {PUBLISH: "publish", QUARANTINE: "quarantine", SPLIT: "split"}[branch]
    result = work / f"{step}.json"
    assert gate_job([step, *common, "--candidate", json.dumps(staged["candidate"]), "--version",
                     str(staged["version"]), "--report", str(report_path), "--result", str(result)]) == 0
    pushed = _json(result) if step == "split" else {step: _json(result)}
    record = verdict({"submission_id": submission_id}, summary, {step: pushed}, {})
    record.update(contract_id=plan["contract"]["id"], contract_version=plan["contract"]["version"],
                  object=plan["object"], plan_fingerprint=plan["fingerprint"], dag_id=plan["names"]["dag_id"],
                  run_id=f"test__{submission_id}", try_number=1)
    return report, branch, decisions.record_decision(load_plan(plan), record)


def _table(home: Path, address: dict) -> list[dict]:
    return DeltaTable(str(home / address["path"])).to_pyarrow_table().to_pylist()


def _published_rows(spark, home: Path, plan: dict) -> list[dict]:
    """The target's rows; read by Spark where the table maps its column names (Delta column
    mapping: nested names with spaces or ';'), which the Python reader does not resolve."""
    if not plan["delta_column_mapping"]:
        return _table(home, plan["tables"]["target"])
    table = spark.read.format("delta").load(str(home / plan["tables"]["target"]["path"]))
    return [row.asDict(recursive=True) for row in table.collect()]


def _version(home: Path, address: dict) -> int:
    return DeltaTable(str(home / address["path"])).version()


def _comparable(value):
    """A value as generated and as read back from Delta alike (floats to the precision of a
    ``float`` column, maps as pairs, timestamps in UTC)."""
    if isinstance(value, dict):
        return tuple(sorted((key, _comparable(item)) for key, item in value.items()))
    if isinstance(value, list):
        if value and all(isinstance(item, tuple) and len(item) == 2 for item in value):  # an Arrow map
            return tuple(sorted((key, _comparable(item)) for key, item in value))
        return tuple(_comparable(item) for item in value)
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, decimal.Decimal):
        return value.normalize()
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc)
    return value


def _same_rows(found: list[dict], expected: list[dict]) -> bool:
    def key(row: dict) -> str:
        return repr(sorted((name, _comparable(value)) for name, value in row.items()))
    return sorted(map(key, found)) == sorted(map(key, expected))


def _ids(cases) -> list[str]:
    return [f"{contract.removesuffix('.yaml')}:{name}" for contract, name in cases]


@pytest.mark.parametrize(("contract", "name"), list(VALID), ids=_ids(VALID))
def test_a_valid_generated_batch_publishes_exactly_its_rows(spark, home, contract, name):
    plan = _plan(contract, name)
    generated = _land(plan, home, VALID[contract, name])

    report, branch, decision = _gate(plan, home, f"{plan['names']['group']}-valid")

    failing = [(r["id"], r["status"]) for r in report["rules"] if r["passed"] is False]
    assert failing == [] and report["schema"]["ok"]
    assert branch == PUBLISH
    assert (decision["outcome"], decision["rows_published"], decision["object"]) == ("published", COUNT, name)
    assert decision["contract_id"] == plan["contract"]["id"]  # the URN or UUID as written
    target = _published_rows(spark, home, plan)
    assert _same_rows(target, generated), (target, generated)
    assert list(target[0]) == [column["name"] for column in plan["columns"]]  # physical names
    not_run = [r["id"] for r in report["rules"] if r["status"] == "not_evaluated"]
    assert (report["outcome"], not_run) == (("warn", ["dataset.unsupported"]) if contract == "engine_soda_warn.yaml"
                                            else ("pass", []))


@pytest.mark.parametrize(("contract", "name"), list(PLANTED), ids=_ids(PLANTED))
def test_a_batch_with_one_planted_invalid_row_never_reaches_the_target_unjudged(spark, home, contract, name):
    plan = _plan(contract, name)
    target = plan["tables"]["target"]
    first = _land(plan, home, VALID[contract, name])
    assert _gate(plan, home, "first")[2]["outcome"] == "published"
    before = _version(home, target)
    planted, rule, expected_branch = PLANTED[contract, name]

    batch = _land(plan, home, {**VALID[contract, name], **planted}, start=COUNT)
    report, branch, decision = _gate(plan, home, "planted")

    failed = {r["id"]: r["failed_rows"] for r in report["rules"] if r["passed"] is False}
    assert failed == {rule: 1}
    assert report["rows"] == {"valid": COUNT - 1, "invalid": 1}
    assert branch == expected_branch
    quarantined = _table(home, plan["tables"]["quarantine"])
    if branch == QUARANTINE:
        assert (decision["outcome"], decision["rows_published"], decision["rows_quarantined"]) == (
            "quarantined", 0, COUNT)
        assert _version(home, target) == before
        assert _same_rows(_table(home, target), first)
        assert len(quarantined) == COUNT
    else:
        assert (decision["outcome"], decision["rows_published"], decision["rows_quarantined"]) == (
            "split", COUNT - 1, 1)
        assert _version(home, target) == before + 1
        bad = [row for row in batch if row["quantity"] == 0]
        assert _same_rows(_table(home, target), first + [row for row in batch if row not in bad])
        assert len(quarantined) == 1
    assert {row["_submission_id"] for row in quarantined} == {"planted"}
