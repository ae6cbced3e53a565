"""The in-process API: validate(), the decorators, the contract as a StructType, the JSON log
line and the switch that turns validation off."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path

import pytest
from _spark_plans import cases_df, cases_plan, good_row

from contract_gate.dataframe import (
    ContractViolation,
    check_input,
    check_output,
    empty_dataframe,
    spark_schema,
    validate,
)

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts"
ORDERS = CONTRACTS / "orders.yaml"
T = datetime(2024, 3, 1)
ORDERS_DDL = "order_id string, customer_id string, order_total double, currency string, order_timestamp timestamp"


@pytest.fixture(scope="module")
def orders(spark):
    return spark.createDataFrame(
        [("O1", "secret-customer-7", 5.0, "USD", T), ("O2", "secret-customer-8", -1.0, "XXX", T)], ORDERS_DDL
    )


def test_hard_mode_raises_with_the_report(orders):
    with pytest.raises(ContractViolation) as raised:
        validate(orders, str(ORDERS))
    report = raised.value.report
    assert report["outcome"] == "fail"
    assert report["rows"] == {"valid": 1, "invalid": 1}
    assert "order_total_not_negative (1)" in str(raised.value)
    assert "secret-customer" not in str(raised.value)


def test_soft_mode_returns_the_report(orders):
    report = validate(orders, ORDERS, mode="soft")
    assert {r["id"] for r in report["rules"] if r["passed"] is False} == {"order_total_not_negative", "currency_allowed"}


def test_a_compiled_plan_is_accepted_too(spark):
    report = validate(cases_df(spark, [good_row()]), cases_plan())
    assert report["outcome"] == "pass"


def test_depth_schema_runs_no_spark_action(spark, orders):
    sc = spark.sparkContext
    sc.setJobGroup("api-schema", "schema only")
    try:
        report = validate(orders.withColumnRenamed("currency", "ccy"), ORDERS, mode="soft", depth="schema")
        assert sc.statusTracker().getJobIdsForGroup("api-schema") == []
    finally:
        sc.setJobGroup("", "")
    assert report["schema"]["missing"] == ["currency"]
    assert report["schema"]["unexpected"] == ["ccy"]
    assert report["outcome"] == "fail"


def test_one_json_log_line_names_each_failing_rule_and_count(orders, caplog):
    with caplog.at_level(logging.INFO, logger="contract_gate.validation"):
        validate(orders, ORDERS, mode="soft")
    records = [r for r in caplog.records if r.name == "contract_gate.validation"]
    assert len(records) == 1
    line = json.loads(records[0].getMessage())
    assert line["outcome"] == "fail"
    assert {(r["id"], r["failed_rows"]) for r in line["failing_rules"]} == {
        ("order_total_not_negative", 1),
        ("currency_allowed", 1),
    }
    assert "secret-customer" not in records[0].getMessage()


def test_disabled_by_environment_variable(orders, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_DISABLE_VALIDATION", "1")
    assert validate(orders, ORDERS) is None

    @check_output(ORDERS)
    def produce():
        return orders

    assert produce() is orders


def test_check_input_validates_the_named_parameter_before_the_call(spark, orders):
    calls = []

    @check_input(ORDERS, param="df")
    def enrich(factor, df):
        calls.append(factor)
        return df

    good = orders.filter("order_id = 'O1'")
    assert enrich(2, df=good) is good
    with pytest.raises(ContractViolation):
        enrich(3, orders)
    assert calls == [2]
    with pytest.raises(TypeError):
        check_input(ORDERS, param="nope")(lambda df: df)


def test_check_output_validates_the_result(orders):
    @check_output(ORDERS, mode="soft")
    def soft():
        return orders

    @check_output(ORDERS)
    def hard():
        return orders

    assert soft() is orders
    with pytest.raises(ContractViolation):
        hard()


def test_contract_as_struct_type_with_comments_and_an_empty_dataframe(spark):
    schema = spark_schema(ORDERS)
    assert schema.simpleString() == (
        "struct<order_id:string,customer_id:string,order_total:double,currency:string,order_timestamp:timestamp>"
    )
    assert schema["order_total"].metadata == {"comment": "Order total in the order currency."}
    assert schema["order_id"].nullable is False
    empty = empty_dataframe(spark, ORDERS)
    report = validate(empty, ORDERS)
    assert report["schema"]["ok"] is True
    assert report["rows"] == {"valid": 0, "invalid": 0}
    cases = validate(empty_dataframe(spark, CONTRACTS / "regional_daily_cases.yaml"), CONTRACTS / "regional_daily_cases.yaml", mode="soft")
    assert [r["id"] for r in cases["rules"] if r["passed"] is False] == ["submission_not_empty"]


def test_bad_arguments_are_refused(orders):
    with pytest.raises(ValueError):
        validate(orders, ORDERS, mode="lenient")
    with pytest.raises(ValueError):
        validate(orders, ORDERS, depth="rows")
