"""Contract semantics that agree with ODCS and with the tools users come from (issue 15), on real
Spark and real Delta tables, with exact counts:

* patterns are ECMA-262: ``$`` is the end of the input (a trailing ``\\n``, ``\\r\\n`` or Unicode
  line separator no longer passes an anchored pattern), ``.`` and ``\\s`` have their ECMA-262
  members; the expected matches were taken from an ECMA-262 engine (node) on the same values;
* NULLs in uniqueness are distinct, as in SQL, unless the contract says ``nullsDistinct: false``;
* a zero tolerance is a row rule: carried in ``_errors``, counted in ``rows.invalid``, split.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate_spark.validation.engine import run_validation
from contract_gate_plan.document import read_document
from contract_gate_plan.model import load_plan

HEADER = """\
apiVersion: v3.1.0
kind: DataContract
id: odcs_semantics
version: 1.0.0
status: active
"""


def compiled(schema: str, extra: str = "") -> dict:
    text = HEADER + textwrap.dedent(schema) + textwrap.dedent(extra)
    return compile_plan(load_contract_text(text, "odcs_semantics.yaml")).document


def failed(report: dict) -> dict[str, int]:
    return {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}


def entry(report: dict, rule_id: str) -> dict:
    return next(r for r in report["rules"] if r["id"] == rule_id)


# -- 1. patterns mean what ECMA-262 says ------------------------------------------------------

SKU_PLAN = """\
schema:
  - name: skus
    physicalType: table
    properties:
      - name: sku
        physicalType: string
        logicalType: string
        logicalTypeOptions: {pattern: '^SKU-[0-9]{5}$'}
        quality:
          - metric: invalidValues
            arguments: {pattern: '^SKU-[0-9]{5}$'}
            mustBe: 0
          - type: custom
            engine: dqx
            implementation:
              check: {function: regex_match, arguments: {regex: '^SKU-[0-9]{5}$'}}
      - name: code
        physicalType: string
        logicalType: string
        logicalTypeOptions: {pattern: '^.{3}$'}
      - name: word
        physicalType: string
        logicalType: string
        logicalTypeOptions: {pattern: '^[^\\s]+$'}
"""

SKUS = [
    # sku, code, word: the trailing comment says which rules the row breaks
    ("SKU-12345", "abc", "x"),  # none
    ("SKU-12345\n", "a\u0085b", "\u00a0x"),  # sku (trailing LF); word (U+00A0 is an ECMA-262 space)
    ("SKU-12345\r\n", "a\nb", "\ufeffx"),  # sku (trailing CRLF); code (. excludes LF); word (U+FEFF)
    ("SKU-12345\u2028", "a\u2028b", "x\u3000"),  # sku (LINE SEPARATOR); code; word (IDEOGRAPHIC SPACE)
    ("SKU-12345\u2029", "\U0001F600ab", "\u200bx"),  # sku (PARAGRAPH SEPARATOR); none (one code point; U+200B is no space)
    ("SKU-12345\u0085", "ab", "x"),  # sku (NEXT LINE, which Java's $ also skips); code (two characters)
    ("SKU-1234", None, None),  # sku; NULL passes a pattern
    (None, "a\rb", "x y"),  # code (. excludes CR); word
]


def test_patterns_have_their_ecma_262_meaning_in_validation(spark, as_delta):
    plan = compiled(SKU_PLAN)
    df = spark.createDataFrame(SKUS, "sku string, code string, word string")

    report = run_validation(spark, plan, as_delta(df))

    # the same translated predicate for the ODCS pattern, invalidValues and DQX regex_match
    assert failed(report) == {"sku.pattern": 6, "sku.invalidValues": 6, "sku.regex_match": 6,
                              "code.pattern": 4, "word.pattern": 4}
    assert report["rows"] == {"valid": 1, "invalid": 7}
    # before issue 15 the contract's text went to RLIKE as it is: Java's $ let five of them through
    raw = df.filter("sku RLIKE '^SKU-[0-9]{5}$'").count()
    assert raw == 6


def test_a_delta_check_constraint_of_a_translated_pattern_refuses_a_trailing_newline(spark, tmp_path):
    from contract_gate_plan.table_ddl import create_table_statements

    plan = compiled(SKU_PLAN)
    target = {"kind": "path", "path": str(tmp_path / "skus"), "format": "delta"}
    for statement in create_table_statements(plan, target):
        spark.sql(statement)
    schema = "sku string, code string, word string"
    spark.createDataFrame([("SKU-00001", "abc", "x")], schema).write.format("delta").mode("append").save(target["path"])
    version = spark.sql(f"DESCRIBE HISTORY delta.`{target['path']}` LIMIT 1").first()["version"]

    with pytest.raises(Exception) as refused:  # Delta's DeltaInvariantViolationException, through py4j
        spark.createDataFrame([("SKU-12345\n", "abc", "x")], schema).write.format("delta").mode("append") \
            .save(target["path"])

    # the three sku rules share one predicate, so each is a CHECK that refuses the row
    assert re.search(r"CHECK constraint cg_sku_(pattern|invalidvalues|regex_match) ", str(refused.value))
    assert spark.sql(f"DESCRIBE HISTORY delta.`{target['path']}` LIMIT 1").first()["version"] == version
    assert [r.sku for r in spark.read.format("delta").load(target["path"]).collect()] == ["SKU-00001"]
    properties = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{target['path']}`").collect()}
    assert {properties[f"delta.constraints.cg_sku_{name}"].replace(" ", "")
            for name in ("pattern", "invalidvalues", "regex_match")} == {"(`sku`ISNULLOR`sku`RLIKE'^SKU-[0-9]{5}\\\\z')"}


# -- 2. NULLs in uniqueness follow SQL ---------------------------------------------------------

UNIQUE_PLAN = """\
schema:
  - name: people
    physicalType: table
    properties:
      - name: tenant
        physicalType: string
        logicalType: string
        required: true
        primaryKey: true
        primaryKeyPosition: 1
      - name: person
        physicalType: int
        logicalType: integer
        required: true
        primaryKey: true
        primaryKeyPosition: 2
      - name: email
        physicalType: string
        logicalType: string
        unique: true
      - name: badge
        physicalType: string
        logicalType: string
        quality:
          - metric: duplicateValues
            mustBe: 0
          - id: badge_nulls_equal
            metric: duplicateValues
            arguments: {nullsDistinct: false}
            mustBe: 0
          - type: custom
            engine: dqx
            implementation:
              name: badge_dqx_unique
              check: {function: is_unique, arguments: {columns: [badge, tenant]}}
          - type: custom
            engine: dqx
            implementation:
              name: badge_dqx_nulls_equal
              check: {function: is_unique, arguments: {columns: [badge, tenant], nulls_distinct: false}}
    quality:
      - metric: duplicateValues
        arguments: {properties: [tenant, email]}
        mustBe: 0
"""

PEOPLE = [
    ("t1", 1, None, None),
    ("t1", 2, None, None),  # two NULL emails and badges: distinct, unless nulls are equal
    ("t1", 3, "a@x", "B1"),
    ("t1", 4, "a@x", "B1"),  # a real duplicate email and badge
    ("t1", 5, "c@x", "B2"),
    (None, 5, "d@x", "B3"),  # a NULL inside the composite key: required rejects it, not key.unique
    (None, 5, "e@x", "B4"),
]


def test_nulls_are_distinct_in_uniqueness_unless_the_contract_says_otherwise(spark, as_delta):
    plan = compiled(UNIQUE_PLAN)
    df = spark.createDataFrame(PEOPLE, "tenant string, person int, email string, badge string")

    report = run_validation(spark, plan, as_delta(df))

    assert failed(report) == {
        "tenant.required": 2,  # the NULL key parts
        "email.unique": 2,  # a@x twice; the two NULLs are not duplicates
        "badge.duplicateValues": 2,
        "badge_nulls_equal": 4,  # B1 twice and NULL twice
        "badge_dqx_unique": 2,  # (B1, t1) twice
        "badge_dqx_nulls_equal": 4,  # and (NULL, t1) twice
        "dataset.duplicateValues": 2,  # (t1, a@x) twice; (t1, NULL) twice is not a duplicate
    }
    assert entry(report, "key.unique")["failed_rows"] == 0  # (NULL, 5) twice is not a duplicate key
    # rows 1 and 2 (NULL badges, nulls equal), 3 and 4 (duplicates), 6 and 7 (NULL tenant)
    assert report["rows"] == {"valid": 1, "invalid": 6}


def test_rows_with_a_null_key_part_carry_only_required_in_errors(spark):
    from contract_gate_spark.validation.diagnostics import diagnose

    plan = compiled(UNIQUE_PLAN)
    df = spark.createDataFrame(PEOPLE, "tenant string, person int, email string, badge string")

    errors = {(r.tenant, r.person): sorted(e.rule_id for e in r._errors)
              for r in diagnose(df, plan).collect()}

    assert errors == {
        ("t1", 1): ["badge_dqx_nulls_equal", "badge_nulls_equal"],
        ("t1", 2): ["badge_dqx_nulls_equal", "badge_nulls_equal"],
        ("t1", 3): ["badge.duplicateValues", "badge_dqx_nulls_equal", "badge_dqx_unique", "badge_nulls_equal",
                    "dataset.duplicateValues", "email.unique"],
        ("t1", 4): ["badge.duplicateValues", "badge_dqx_nulls_equal", "badge_dqx_unique", "badge_nulls_equal",
                    "dataset.duplicateValues", "email.unique"],
        ("t1", 5): [],
        (None, 5): ["tenant.required"],
    }


# -- 3. a zero tolerance is a row rule ----------------------------------------------------------

PAYMENTS = """\
servers:
  - server: local
    type: local
    environment: dev
    path: lakehouse
    format: delta
schema:
  - name: payments
    physicalType: table
    properties:
      - name: payment_id
        physicalType: string
        logicalType: string
        required: true
        primaryKey: true
      - name: currency
        physicalType: string
        logicalType: string
        quality:
          - metric: invalidValues
            arguments: {validValues: [EUR, USD]}
            mustBe: 0
      - name: note
        physicalType: string
        logicalType: string
        quality:
          - metric: missingValues
            arguments: {missingValues: [null, '']}
            mustBeLessThan: 50
            unit: percent
customProperties:
  - property: contractGate
    value:
      landing: {path: landing/payments, format: parquet}
      publication: {mode: append}
      violations: {policy: split_rows}
"""

PAYMENT_ROWS = [
    ("p1", "EUR", "ok"),
    ("p2", "USD", ""),  # a missing note: within the 50 % tolerance, a batch verdict, not a row error
    ("p3", "GBP", "ok"),  # not a valid value: breaks the zero tolerance
    ("p4", None, "ok"),  # NULL is not an invalid value (invalidValues counts values)
    ("p5", "eur", "ok"),  # case matters
]


@pytest.mark.slow  # 6 s or more
def test_a_zero_tolerance_invalid_values_rule_splits_the_batch_through_the_gate_steps(spark, tmp_path):
    from contract_gate.operators.branch import SPLIT, decide
    from contract_gate.operators.validate import summarize
    from contract_gate_spark.commands.gate_job import main

    plan = compiled(PAYMENTS)
    for address in plan["tables"].values():
        address["path"] = f"{tmp_path}/{address['path']}"
    plan.pop("fingerprint")
    plan = read_document(plan)
    rule = next(r for r in plan["rules"] if r["id"] == "currency.invalidValues")
    assert (rule["scope"], rule["threshold"], rule["enforceable"]) == ("row", None, True)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    landing = tmp_path / "drop"
    spark.createDataFrame(PAYMENT_ROWS, "payment_id string, currency string, note string").write.parquet(str(landing))
    common = ["--plan", str(plan_file), "--submission-id", "pay-1"]

    assert main(["stage", *common, "--landing", str(landing), "--result", str(tmp_path / "stage.json")]) == 0
    staged = json.loads((tmp_path / "stage.json").read_text(encoding="utf-8"))
    report_path = tmp_path / "report.json"
    assert main(["validate", "--plan", str(plan_file), "--candidate", staged["candidate"]["path"], "--version",
                 str(staged["version"]), "--submission-id", "pay-1", "--report", str(report_path)]) == 0
    report = json.loads(report_path.read_text(encoding="utf-8"))

    assert failed(report) == {"currency.invalidValues": 2, "note.missingValues": 1}
    assert entry(report, "note.missingValues")["passed"] is True  # 20 % < 50 %: the batch passes it
    assert report["rows"] == {"valid": 3, "invalid": 2}
    decision, reason = decide(load_plan(plan), summarize(report, report_path, staged["candidate"]))
    assert decision == SPLIT, reason  # before issue 15: quarantined, "failed rules judge the whole batch"

    assert main(["split", *common, "--candidate", json.dumps(staged["candidate"]), "--version",
                 str(staged["version"]), "--report", str(report_path), "--result", str(tmp_path / "split.json")]) == 0

    result = json.loads((tmp_path / "split.json").read_text(encoding="utf-8"))
    assert (result["publish"]["rows"], result["quarantine"]["rows"]) == (3, 2)
    target = spark.read.format("delta").load(plan["tables"]["target"]["path"])
    assert sorted(r.payment_id for r in target.collect()) == ["p1", "p2", "p4"]
    quarantined = spark.read.format("delta").load(plan["tables"]["quarantine"]["path"]).collect()
    assert sorted((r.payment_id, [e.rule_id for e in r._errors]) for r in quarantined) == [
        ("p3", ["currency.invalidValues"]), ("p5", ["currency.invalidValues"])]
    properties = {r.key: r.value for r in spark.sql(
        f"SHOW TBLPROPERTIES delta.`{plan['tables']['target']['path']}`").collect()}
    assert "delta.constraints.cg_currency_invalidvalues" in properties  # the target enforces it too
    assert "delta.constraints.cg_note_missingvalues" not in properties  # a tolerance is no constraint


# -- a hostile pattern stays a pattern ------------------------------------------------------------

def test_a_hostile_pattern_stays_a_pattern_on_spark(spark, as_delta):
    """tests/contracts_hostile/pattern_quote_breakout.yaml: its quotes and parentheses are
    characters of the regex, escaped inside one SQL literal; java_method never runs."""
    from pathlib import Path

    plan = compile_plan(Path(__file__).resolve().parents[1] / "contracts_hostile" / "pattern_quote_breakout.yaml")
    text = "x') OR java_method('java.lang.System', 'exit', 0) = 0 OR ('"
    df = spark.createDataFrame([(text,), ("SKU-1",), (None,)], "sku string")

    report = run_validation(spark, plan, as_delta(df))

    assert failed(report) == {"sku.pattern": 1}  # only the row that is not exactly the pattern's text
    assert report["rows"] == {"valid": 2, "invalid": 1}
    assert spark.range(1).count() == 1  # the JVM is still there


# -- the translation agrees with an ECMA-262 engine ---------------------------------------------

# (pattern, value, does ECMA-262 find the pattern in the value): taken from node's RegExp with the
# u flag (code points, as the gate reads them); without it only the emoji row differs.
ECMA_262_MATCHES = [
    ('^.$', '\x85', True),
    ('^.$', '\n', False),
    ('^.$', '\r', False),
    ('^.$', '\u2028', False),
    ('^.$', '\u2029', False),
    ('^.$', '😀', True),  # ECMA-262 without the u flag: False (one UTF-16 unit)
    ('^.$', 'é', True),
    ('^\\s$', '\xa0', True),
    ('^\\s$', '\ufeff', True),
    ('^\\s$', '\u3000', True),
    ('^\\s$', '\u1680', True),
    ('^\\s$', '\u200a', True),
    ('^\\s$', '\u202f', True),
    ('^\\s$', '\x0b', True),
    ('^\\s$', '\u200b', False),
    ('^\\s$', '\x85', False),
    ('^\\s$', '\u2028', True),
    ('^\\S$', '\xa0', False),
    ('^\\S$', '\u200b', True),
    ('^\\S$', '\x85', True),
    ('\\bfoo\\b', 'éfoo', True),
    ('\\bfoo\\b', 'fooé', True),
    ('\\bfoo\\b', 'xfoo', False),
    ('\\bfoo\\b', 'foo', True),
    ('^\\w+$', 'é', False),
    ('^\\w+$', 'a_1', True),
    ('^\\d+$', '١٢', False),
    ('^\\d+$', '12', True),
    ('^[\\s\\S]$', '\n', True),
    ('^[\\s\\S]$', '\u2028', True),
    ('^[\\s\\S]$', 'x', True),
    ('^[^]$', '\n', True),
    ('^[^]$', 'x', True),
    ('[]', 'x', False),
    ('[]', '', False),
    ('^[&&]+$', '&&', True),
    ('^[&&]+$', '&', True),
    ('^[\\[]$', '[', True),
    ('^[\\[]$', '\\', False),
    ('^\\v$', '\x0b', True),
    ('^\\v$', '\n', False),
    ('^[\\b]$', '\x08', True),
    ('^[\\b]$', 'b', False),
    ('^\\0$', '\x00', True),
    ('^\\0$', '0', False),
    ('x$|^y', 'x\n', False),
    ('x$|^y', 'yes', True),
    ('x$|^y', 'ax', True),
    ('^(?<x>ab)+$', 'abab', True),
    ('^(?<x>ab)+$', 'aba', False),
    ('(?<=a)b', 'ab', True),
    ('(?<=a)b', 'cb', False),
]


def test_translated_patterns_match_what_ecma_262_matches(spark):
    from contract_gate.contract.patterns import rlike

    df = spark.createDataFrame([(i, value) for i, (_, value, _) in enumerate(ECMA_262_MATCHES)], "i int, v string")
    matches = df.selectExpr("i", *[f"{rlike('v', p)} AS m{i}" for i, (p, _, _) in enumerate(ECMA_262_MATCHES)])
    found = {row.i: row[f"m{row.i}"] for row in matches.collect()}

    assert [found[i] for i in range(len(ECMA_262_MATCHES))] == [expected for _, _, expected in ECMA_262_MATCHES]


# -- 4. maxLength counts characters, whatever its shortcut on bytes ------------------------------

NAMES_PLAN = """\
schema:
  - name: names
    physicalType: table
    properties:
      - name: name
        physicalType: string
        logicalType: string
        logicalTypeOptions: {maxLength: 3}
"""
# (value, characters): Spark counts code points, as ODCS's JSON-Schema maxLength does
NAMES = [
    (None, None), ("", 0), ("abc", 3), ("abcd", 4),
    ("éé", 2), ("ééé", 3), ("éééé", 4),  # 2 bytes a character: over 3 bytes, within 3 characters
    ("日本語", 3), ("日本語だ", 4),  # 3 bytes a character
    ("😀😀😀", 3), ("😀😀😀😀", 4),  # 4 bytes a character
    ("a\u0301b", 3),  # a combining accent is a code point of its own
]


def test_max_length_counts_characters_and_its_byte_shortcut_changes_no_count(spark, as_delta):
    """``maxLength``'s ``passes_when`` (at most N bytes) lets Spark skip counting the characters
    of most strings; a multi-byte string past N bytes is still judged on its characters, in the
    report and in the rows' ``_errors``, and the table's CHECK constraint is the predicate alone."""
    from pyspark.sql import functions as F

    from contract_gate_plan.table_ddl import expected_constraints
    from contract_gate_spark.validation.diagnostics import diagnose

    plan = compiled(NAMES_PLAN)
    max_length = next(rule for rule in plan["rules"] if rule["id"] == "name.max_length")
    assert max_length["passes_when"] == "octet_length(`name`) <= 3"
    assert expected_constraints(plan)[next(iter(expected_constraints(plan)))] == max_length["predicate"]
    df = spark.createDataFrame([(value,) for value, _ in NAMES], "name string")
    too_long = sorted(value for value, characters in NAMES if characters is not None and characters > 3)

    report = run_validation(spark, plan, as_delta(df))

    assert len(too_long) == 4
    assert failed(report) == {"name.max_length": 4}
    by_predicate = df.filter(~F.coalesce(F.expr(max_length["predicate"]), F.lit(False)))
    assert sorted(row.name for row in by_predicate.collect()) == too_long
    marked = diagnose(df, plan).filter(F.size("_errors") > 0)
    assert sorted(row.name for row in marked.collect()) == too_long
    assert report["rows"] == {"valid": len(NAMES) - 4, "invalid": 4}


# -- 5. notBlank judges the whole string, whatever its shortcut on the first byte ----------------

BLANK_PLAN = """\
schema:
  - name: codes
    physicalType: table
    properties:
      - name: whitespace
        physicalType: string
        logicalType: string
        customProperties: [{property: notBlank, value: whitespace}]
      - name: spaces
        physicalType: string
        logicalType: string
        customProperties: [{property: notBlank, value: spaces}]
"""
# value, blank in mode whitespace, blank in mode spaces (Spark's trim removes U+0020 only)
BLANKS = [
    (None, False, False), ("R1", False, False), ("!", False, False), ("~x", False, False),
    ("", True, True), ("   ", True, True), (" R", False, False), ("\tR", False, False),
    ("\t", True, False), ("\n \r", True, False), ("\u00a0", True, False), ("\u00a0x", False, False),
    ("\u2003\u200b\ufeff\u0085", True, False), ("\u007f", False, False), ("\u00e9", False, False),
]


def test_not_blank_judges_the_whole_string_and_its_first_byte_shortcut_changes_no_count(spark, as_delta):
    """``notBlank``'s ``passes_when`` passes a string starting with ``!`` to ``~`` without its
    regular expression (or trim); a string starting with a space, a control character, a
    no-break space or any other multi-byte character is judged by the predicate, in the report
    and in the rows' ``_errors``."""
    from pyspark.sql import functions as F

    from contract_gate_spark.validation.diagnostics import diagnose

    plan = compiled(BLANK_PLAN)
    rules = {rule["id"]: rule for rule in plan["rules"]}
    df = spark.createDataFrame([(value, value) for value, _, _ in BLANKS], "whitespace string, spaces string")
    blank = {
        "whitespace": sorted(value for value, in_whitespace, _ in BLANKS if in_whitespace),
        "spaces": sorted(value for value, _, in_spaces in BLANKS if in_spaces),
    }

    report = run_validation(spark, plan, as_delta(df))

    assert [len(blank["whitespace"]), len(blank["spaces"])] == [6, 2]
    assert failed(report) == {"whitespace.not_blank": 6, "spaces.not_blank": 2}
    for name, values in blank.items():
        predicate = rules[f"{name}.not_blank"]["predicate"]
        by_predicate = df.filter(~F.coalesce(F.expr(predicate), F.lit(False)))
        assert sorted(row[name] for row in by_predicate.collect()) == values
        marked = diagnose(df, plan).filter(F.exists("_errors", lambda e: e.rule_id == f"{name}.not_blank"))
        assert sorted(row[name] for row in marked.collect()) == values


def test_a_hostile_column_name_in_a_shortcut_reads_that_column_alone(spark):
    """A column named to close its identifier (``a` <= 99 OR `b``) keeps both shortcuts on that
    one column on Spark: the rules judge its values, and no other column decides them (the
    batch is a DataFrame: Delta refuses the name's spaces without column mapping)."""
    name = "a` <= 99 OR `b"
    plan = compiled(f"""\
        schema:
          - name: hostile
            physicalType: table
            properties:
              - name: {json.dumps(name)}
                physicalType: string
                logicalType: string
                logicalTypeOptions: {{maxLength: 3}}
                customProperties: [{{property: notBlank, value: true}}]
              - {{name: a, physicalType: int, logicalType: integer}}
              - {{name: b, physicalType: int, logicalType: integer}}
        """)
    rows = [("ok", 1, 1), ("   ", 1, 1), ("toolong", 1, 1), ("éééé", 1, 1)]
    df = spark.createDataFrame(rows, f"`{name.replace('`', '``')}` string, a int, b int")

    report = run_validation(spark, plan, df)

    assert failed(report) == {f"{name}.max_length": 2, f"{name}.not_blank": 1}
