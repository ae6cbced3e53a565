"""The rule flags counted as bits of a few words (``contract_gate_spark.validation.flag_words``) give the
counts that one ``filter().count()`` per rule gives: across several words, for the broken rows
(error flags spread over words), under a filter, for a batch crafted to raise more distinct
sets of flags than the driver reads, and for an empty batch. The passes leave the session's
``spark.sql.codegen.hugeMethodLimit`` as they found it."""

from __future__ import annotations

import pytest
from _spark_plans import cases_df, cases_plan, failed, good_row, rule, rule_entry, with_rules

from contract_gate_spark.validation import flag_words, key_hash
from contract_gate_spark.validation.engine import run_validation
from contract_gate_spark.validation.pass_settings import HUGE_METHOD_LIMIT

RULES = 150  # three 63-bit words


def threshold_plan():
    """``case_count <= n`` for n below ``RULES``: warnings, but every 40th an error, and every
    7th judging only the rows whose status is final."""
    rules = [
        rule(
            f"case_count.at_most_{n}",
            "maximum",
            ["case_count"],
            f"case_count <= {n}",
            severity="error" if n % 40 == 39 else "warning",
            **({"filter": "status = 'final'"} if n % 7 == 3 else {}),
        )
        for n in range(RULES)
    ]
    return with_rules(cases_plan(), *rules)


@pytest.fixture(scope="module")
def batch(spark):
    statuses = ["final", "provisional", None]
    rows = [good_row(region=f"R{i}", count=(i * 37) % 170, status=statuses[i % 3]) for i in range(120)]
    return cases_df(spark, rows)


def expected(batch, n):
    rows = batch.collect()
    judged = [r for r in rows if n % 7 != 3 or r.status == "final"]
    return sum(1 for r in judged if r.case_count > n), len(judged)


@pytest.mark.slow  # a long run: 150 flags one batch each, about 14 s
def test_every_flag_of_three_words_is_counted_exactly(spark, batch):
    report = run_validation(spark, threshold_plan(), batch)
    for n in range(RULES):
        entry = rule_entry(report, f"case_count.at_most_{n}")
        assert (entry["failed_rows"], entry["evaluated_rows"]) == expected(batch, n), n
    # error rules at 39, 79, 119 (words 0, 1 and 1): a row is invalid when it fails any of them
    broken = {r.region_code for r in batch.collect() if r.case_count > 39}
    assert report["rows"] == {"valid": 120 - len(broken), "invalid": len(broken)}


def test_more_flag_sets_than_the_driver_reads_are_counted_apart(spark, batch, monkeypatch):
    """A batch with more distinct sets of raised flags than ``FLAG_SETS`` is counted one
    aggregate function per flag: the same report."""
    read = run_validation(spark, threshold_plan(), batch)
    monkeypatch.setattr(flag_words, "FLAG_SETS", 2)
    counted_apart = run_validation(spark, threshold_plan(), batch)
    assert failed(counted_apart) == failed(read) and failed(read)
    assert counted_apart["rows"] == read["rows"]


def test_more_flag_sets_than_the_driver_reads_keep_the_key_counts(spark, monkeypatch):
    rows = [good_row(region="NL-NH", day=1, count=c) for c in (-1, -2, 3)] + [good_row(region="BE", count=-4)]
    plan = with_rules(
        cases_plan(),
        rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"),
        rule("key.unique", "unique", ["region_code", "report_date"]),
    )
    monkeypatch.setattr(flag_words, "FLAG_SETS", 0)
    report = run_validation(spark, plan, cases_df(spark, rows))
    key = rule_entry(report, "key.unique")
    assert (key["failed_rows"], key["duplicate_groups"]) == (3, 1)
    assert failed(report)["case_count.minimum"] == 3
    assert report["rows"] == {"valid": 0, "invalid": 4}


@pytest.mark.parametrize("hash_bits", [0, 64])
def test_duplicate_keys_whose_rows_raise_different_flags_are_counted_exactly(spark, monkeypatch, hash_bits):
    """A key group carries the bits all its rows raise and the bits any of them raises: exact
    for a group of two, not for three rows of which two raise a flag, where the engine counts
    the flags one aggregate function each. With a 0-bit hash every key is one hash group."""
    monkeypatch.setattr(key_hash, "HASH_BITS", hash_bits)
    rows = [good_row(region="R1", count=c) for c in (-1, 5)]  # a pair, one row negative
    rows += [good_row(region="R2", count=c) for c in (-1, -2, 7)]  # three, two negative
    rows += [good_row(region=f"S{i}", count=-i) for i in range(5)]  # S1..S4 negative
    plan = with_rules(
        cases_plan(),
        rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"),
        rule("key.unique", "unique", ["region_code", "report_date"]),
    )
    report = run_validation(spark, plan, cases_df(spark, rows))
    assert failed(report)["case_count.minimum"] == 1 + 2 + 4
    key = rule_entry(report, "key.unique")
    assert (key["failed_rows"], key["duplicate_groups"]) == (5, 2)
    assert report["rows"] == {"valid": 1, "invalid": 9}


def test_an_empty_batch_counts_nothing(spark):
    report = run_validation(spark, threshold_plan(), cases_df(spark, []))
    assert not failed(report)
    assert report["rows"] == {"valid": 0, "invalid": 0}


@pytest.mark.parametrize("before", [None, "20000", "4000"])
def test_the_method_limit_is_left_as_it_was(spark, batch, before):
    if before is None:
        spark.conf.unset(HUGE_METHOD_LIMIT)
    else:
        spark.conf.set(HUGE_METHOD_LIMIT, before)
    try:
        default = spark.conf.get(HUGE_METHOD_LIMIT)
        run_validation(spark, threshold_plan(), batch)
        assert spark.conf.get(HUGE_METHOD_LIMIT) == default
    finally:
        spark.conf.unset(HUGE_METHOD_LIMIT)
