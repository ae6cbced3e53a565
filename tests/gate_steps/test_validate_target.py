"""``contract-gate validate --target``: a contract version checked against the whole target table
as it is now, at a pinned Delta version, with exactly the per-rule counts that validating the
same rows as a batch gives, and nothing written."""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET

import pytest
import yaml

from _gate_plans import table_rows, version_of
from contract_gate.cli.main import main
from contract_gate_plan.model import load_plan
from contract_gate_spark.validation.engine import run_validation
from test_migration import deployed_v1, orders_plan, orders_text

COLUMNS = "order_id string, customer_id string, order_total double, currency string"
MORE = [("o-3", "c-3", 5.0, "GBP"), ("o-4", "c-4", 6.0, "GBP"), ("o-5", "c-5", 7.0, "USD")]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow  # validates the target three times
def test_validate_target_counts_what_validating_the_tables_rows_as_a_batch_counts(spark, tmp_path, monkeypatch):
    v1 = deployed_v1(spark, tmp_path)  # an EUR and a GBP order
    target = v1["tables"]["target"]
    spark.createDataFrame(MORE, COLUMNS).selectExpr("*", "timestamp'2024-03-02 01:00:00' AS order_timestamp") \
        .write.format("delta").mode("append").save(target["path"])
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))  # where the contract's relative paths lead
    v2 = tmp_path / "orders_v2.yaml"
    v2.write_text(orders_text("2.0.0", no_gbp=True))  # GBP no longer allowed: three rows break it
    version = version_of(spark, target)

    code, out, _ = _run(str(v2), "--target", "--json", "--junit", str(tmp_path / "junit.xml"))

    report = json.loads(out)
    expected = run_validation(spark, load_plan(orders_plan(tmp_path, "2.0.0", no_gbp=True)),
                              spark.createDataFrame(table_rows(spark, target)))
    assert code == 1 and report["outcome"] == "fail"
    assert (report["candidate"]["table"], report["candidate"]["version"]) == (target["path"], version)
    assert report["candidate"]["row_count"] == 5
    counts = {rule["id"]: rule["failed_rows"] for rule in report["rules"]}
    assert counts == {rule["id"]: rule["failed_rows"] for rule in expected["rules"]}
    assert [rule for rule, failed in counts.items() if failed] == ["currency_allowed"]
    assert counts["currency_allowed"] == 3
    assert "GBP" not in out  # counts, never values
    failures = [case.get("name") for case in ET.parse(tmp_path / "junit.xml").iter("testcase")
                if case.find("failure") is not None]
    assert failures == ["currency_allowed"]
    assert version_of(spark, target) == version  # nothing written

    code, out, _ = _run(str(v2), "--target", "--object", "orders")
    assert code == 1 and f"{target['path']} @ version {version}: 5 rows" in out
    v1_file = tmp_path / "orders_v1.yaml"
    v1_file.write_text(orders_text("1.0.0"))
    assert _run(str(v1_file), "--target")[0] == 0  # the table meets the version it was published under
    assert version_of(spark, target) == version


def test_validate_target_refuses_what_it_cannot_validate(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    contract = tmp_path / "orders.yaml"
    contract.write_text(orders_text("1.0.0"))
    code, _, err = _run(str(contract), "--target", "--object", "customers")
    assert code == 2 and "no schema object 'customers'" in err
    assert _run(str(contract), "--data", str(tmp_path), "--object", "orders")[0] == 2
    code, _, err = _run(str(contract), "--data", str(tmp_path), "--target")
    assert code == 2 and "not allowed with argument" in err  # one or the other
    code, _, err = _run(str(contract), "--target")  # nothing published yet
    assert code == 2 and "holds no Delta table yet" in err


def test_a_threshold_that_counts_one_batchs_rows_is_not_judged_on_the_published_table(spark, tmp_path, monkeypatch):
    """Batches of at most 3 rows, each accepted, add up to a 5-row target: ``rowCount <= 3`` and "at
    most 1 order in GBP" bound one batch, so over the table they are not executed (found by the
    model-based walk: validate --target failed a target the gate had built batch by batch). A
    threshold in percent bounds the table as it bounds each batch, and is still judged."""
    v1 = deployed_v1(spark, tmp_path)
    target = v1["tables"]["target"]
    spark.createDataFrame(MORE, COLUMNS).selectExpr("*", "timestamp'2024-03-02 01:00:00' AS order_timestamp") \
        .write.format("delta").mode("append").save(target["path"])
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    data = yaml.safe_load(orders_text("1.0.0"))
    data["schema"][0]["quality"] = [
        {"id": "batch_rows", "metric": "rowCount", "mustBeLessOrEqualTo": 3},
        {"id": "few_gbp", "type": "sql", "query": "SELECT COUNT(*) FROM orders WHERE currency = 'GBP'",
         "mustBeLessOrEqualTo": 1},
    ]
    currency = next(p for p in data["schema"][0]["properties"] if p["name"] == "currency")
    currency["quality"].append({"id": "gbp_share", "metric": "invalidValues", "unit": "percent",
                                "arguments": {"validValues": ["EUR", "USD"]}, "mustBeLessThan": 70})
    contract = tmp_path / "orders.yaml"
    contract.write_text(yaml.safe_dump(data, sort_keys=False))

    code, out, err = _run(str(contract), "--target", "--json")

    assert out, err
    rules = {rule["id"]: rule for rule in json.loads(out)["rules"]}
    assert code == 0, [(r["id"], r["status"], r["passed"]) for r in rules.values() if not r["passed"]]
    assert rules["batch_rows"]["status"] == "not_executed"
    assert "one batch" in rules["batch_rows"]["reason"]
    assert rules["few_gbp"]["status"] == "not_executed"
    assert (rules["gbp_share"]["status"], rules["gbp_share"]["measured"]) == ("evaluated", 60)  # 3 GBP of 5 rows
