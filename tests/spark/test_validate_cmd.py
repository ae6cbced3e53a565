"""`contract-gate validate`: a readable table of rules and counts, the report file, the report as
JSON (``--json``), JUnit XML (``--junit``), and exit codes 0 pass/warn, 1 fail, 2 when it cannot
validate."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

from contract_gate.cli.main import main

ORDERS = str(Path(__file__).resolve().parents[2] / "contracts" / "orders.yaml")
DDL = "order_id string, customer_id string, order_total double, currency string, order_timestamp timestamp"
T = datetime(2024, 3, 1)


def test_a_failing_batch_prints_rules_and_exits_1(spark, tmp_path, capsys):
    data = str(tmp_path / "orders")
    rows = [("O1", "C1", 1.0, "USD", T), ("O2", "C2", -1.0, "USD", T), ("O2", "C3", 2.0, "ABC", T)]
    spark.createDataFrame(rows, DDL).write.format("delta").save(data)
    code = main(["validate", ORDERS, "--data", data, "--report", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 1
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line and line.split()[0] in (
        "order_total_not_negative", "currency_allowed", "key.unique", "order_id.required")}
    assert lines == {
        "order_id.required": ["error", "0", "ok"],
        "order_total_not_negative": ["error", "1", "FAIL"],
        "currency_allowed": ["error", "1", "FAIL"],
        "key.unique": ["error", "2", "FAIL"],
    }
    assert "rows: 1 valid, 2 invalid — outcome: FAIL" in out
    assert json.loads((tmp_path / "r.json").read_text())["candidate"]["version"] == 0


def test_a_clean_parquet_file_passes(spark, tmp_path, capsys):
    data = str(tmp_path / "orders.parquet")
    spark.createDataFrame([("O1", "C1", 1.0, "USD", T)], DDL).write.parquet(data)
    assert main(["validate", ORDERS, "--data", data, "--format", "parquet"]) == 0
    assert "outcome: PASS" in capsys.readouterr().out


def test_a_bad_contract_or_unreadable_data_exits_2(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v3.0.0\nkind: DataContract\n")
    assert main(["validate", str(broken), "--data", str(tmp_path)]) == 2
    assert main(["validate", ORDERS, "--data", str(tmp_path / "nowhere")]) == 2
    assert "no data at" in capsys.readouterr().err
    assert main(["validate", ORDERS, "--data", str(tmp_path)]) == 2  # a folder, but no Delta table
    assert "could not validate" in capsys.readouterr().err


def test_json_and_junit_report_every_rule_and_junit_holds_no_value(spark, tmp_path, capsys):
    data = str(tmp_path / "orders")
    rows = [("O1", "C1", 1.0, "USD", T), ("O2", "C2", -7.5, "USD", T), ("O2", "C3", 2.0, "XQZ", T)]
    spark.createDataFrame(rows, DDL).write.format("delta").save(data)
    junit = tmp_path / "validate.xml"

    code = main(["validate", ORDERS, "--data", data, "--input-format", "delta", "--json",
                 "--junit", str(junit)])
    out = capsys.readouterr().out

    assert code == 1
    report = json.loads(out)  # stdout is the one JSON document
    assert report["outcome"] == "fail" and report["candidate"]["version"] == 0
    failed = {rule["id"]: rule["failed_rows"] for rule in report["rules"] if rule["passed"] is False}
    assert failed == {"order_total_not_negative": 1, "currency_allowed": 1, "key.unique": 2}
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["schema", *(rule["id"] for rule in report["rules"])]
    failures = {name: case.find("failure").get("message") for name, case in cases.items()
                if case.find("failure") is not None}
    assert failures == {rule: f"{rule}: {rows} failed rows; FAIL" for rule, rows in failed.items()}
    text = junit.read_text(encoding="utf-8")
    assert not any(value in text for value in ("XQZ", "-7.5", "C3", "O2"))  # counts, never values
