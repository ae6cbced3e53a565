"""Nothing in a contract executes as unintended SQL: identifiers are back-quoted (an embedded
back-quote doubled), literals escaped, DQX list items stay literals, and rule ids become safe
constraint names. (test_spark_semantics.py runs the hostile cases on Spark.)"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

from _contract_texts import column, compile_text, contract, rule
from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.document import read_document
from contract_gate_plan.sql_allowlist import check_expression
from contract_gate_plan.sql_text import string_literal
from contract_gate_plan.table_ddl import constraint_names, create_table_statements

ROOT = Path(__file__).resolve().parents[2]


def test_hostile_dqx_allowed_items_stay_literals():
    quality = ("- type: custom\n  engine: dqx\n  implementation:\n    name: r\n    check:\n      function: is_in_list\n"
               "      arguments:\n        allowed: [\"'a'') OR (''1''=''1'\", \"x' OR 1=1 --\", \"'it\\\\'s'\"]")
    predicate = rule(compile_text(contract(column("v", "string", "string", quality=quality))), "r")["predicate"]
    assert predicate == "(`v` IS NULL OR `v` IN ('a\\') OR (\\'1\\'=\\'1', 'x\\' OR 1=1 --', 'it\\'s'))"


def test_hostile_names_and_descriptions_in_the_ddl():
    props = column('"a`b"', "int", "integer", required="true", description="\"it's -- ok\\\\\"",
                   logicalTypeOptions="{minimum: 0}")
    text = contract(props, extra="customProperties:\n  - property: contractGate\n    value:\n      landing: {path: in}")
    plan = compile_text(text)
    create, check = create_table_statements(plan, {"kind": "path", "path": "/tmp/x`y"})
    assert create.splitlines()[1] == "  `a``b` int NOT NULL COMMENT 'it\\'s -- ok\\\\'"
    assert check == "ALTER TABLE delta.`/tmp/x``y` ADD CONSTRAINT `cg_a_b_minimum` CHECK ((`a``b` IS NULL OR `a``b` >= 0))"


def test_a_hostile_column_name_stays_one_identifier_in_a_rules_shortcut():
    """``passes_when`` is written by the compiler, never taken from the contract, and names the
    column as the predicate does: a name built to close the identifier stays inside it, and the
    plan's check on the Spark side accepts the text as its own rendering."""
    name = "a` <= 99 OR `b"
    props = column(json.dumps(name), "string", "string", logicalTypeOptions="{maxLength: 3}",
                   customProperties="[{property: notBlank, value: true}]")
    plan = read_document(compile_text(contract(props)))
    shortcuts = {r["id"]: r["passes_when"] for r in plan["rules"] if r.get("passes_when")}
    quoted = "`a`` <= 99 OR ``b`"
    assert shortcuts == {f"{name}.max_length": f"octet_length({quoted}) <= 3",
                         f"{name}.not_blank": f"{quoted} >= '!' AND {quoted} <= '~'"}


def test_constraint_names_are_plain_lower_case_words():
    quality = ("- type: custom\n  engine: spark-sql\n  name: \"Weird Name; DROP\"\n  implementation: v > 0\n"
               "- type: custom\n  engine: spark-sql\n  name: weird-name--drop\n  implementation: v > 1")
    plan = compile_text(contract(column("v", "int", "integer", quality=quality)))
    assert constraint_names(plan) == {"Weird Name; DROP": "cg_weird_name__drop", "weird-name--drop": "cg_weird_name__drop_2"}


# One call or form of each allowed function and operator, with the contract's own spelling: the
# rendered text must compute the same on Spark (sqlglot rewrites some: instr -> locate,
# date_sub -> date_add(d, n * -1), a BD literal, a CAST...).
ALLOWED_FORMS = (
    'abs(m)',
    'acos(m)',
    'asin(m)',
    'atan(m)',
    'atan2(n, m)',
    'cbrt(n)',
    'ceil(n)',
    'ceiling(n)',
    'cos(n)',
    'cosh(m)',
    'degrees(n)',
    'exp(m)',
    'floor(n)',
    'ln(n)',
    'log(n)',
    'log(2, n)',
    'log10(n)',
    'log2(n)',
    'pow(n, 2)',
    'power(n, m)',
    'radians(n)',
    'rint(n)',
    'round(n, 0)',
    'round(n)',
    'sign(m)',
    'signum(m)',
    'sin(n)',
    'sinh(m)',
    'sqrt(n)',
    'tan(n)',
    'tanh(n)',
    'isnan(n)',
    'nanvl(n, 0.0D)',
    'try_add(i, 1)',
    'try_subtract(i, 1)',
    'try_multiply(i, 2)',
    'try_divide(i, 0)',
    'coalesce(n, m, 0.0D)',
    'ifnull(n, 1.0D)',
    'nvl(n, 1.0D)',
    'nullif(i, 3)',
    'nvl2(n, 1, 2)',
    'greatest(n, m)',
    'least(n, m)',
    'length(s)',
    'char_length(s)',
    'character_length(s)',
    'bit_length(s)',
    'lower(s)',
    'upper(s)',
    'lcase(s)',
    'ucase(s)',
    'initcap(s)',
    'trim(s)',
    'ltrim(s)',
    'rtrim(s)',
    "trim(BOTH 'x' FROM s)",
    "trim(LEADING ' ' FROM s)",
    'btrim(s)',
    'concat(s, t)',
    "concat_ws('-', s, t)",
    "contains(s, 'b')",
    "startswith(s, 'A')",
    "endswith(s, 'd')",
    'left(s, 2)',
    'right(s, 2)',
    "lpad(s, 6, '*')",
    "rpad(s, 6, '*')",
    'repeat(t, 3)',
    'space(2)',
    "replace(s, 'b', 'X')",
    'reverse(s)',
    'substring(s, 2, 3)',
    'substr(s, 2)',
    'substring(s FROM 2 FOR 1)',
    "substring_index(s, ',', 1)",
    "split_part(s, ',', 2)",
    "instr(s, 'b')",
    "locate('b', s)",
    "locate('b', s, 2)",
    "position('b' IN s)",
    'levenshtein(s, t)',
    'ascii(s)',
    'chr(65)',
    'char(66)',
    "regexp_count(s, '[a-z]')",
    "regexp_instr(s, 'b')",
    "regexp_replace(s, '[,]', ';')",
    "regexp_substr(s, '[a-z]+')",
    "regexp_extract(s, '(A)(b)', 2)",
    "regexp_extract(s, '(A)(b)', 1)",
    "regexp_extract(s, '(A)(b)', 0)",
    "regexp_extract(s, '(A)(b)')",
    "regexp_extract_all(s, '([a-z])', 1)",
    "regexp_extract_all(s, '([a-z])', 0)",
    "s RLIKE '^A\\\\w'",
    "s RLIKE '\\\\\\\\'",
    "s REGEXP 'b'",
    "regexp_like(s, 'c')",
    "s LIKE 'A%'",
    "s ILIKE 'a%'",
    "s LIKE 'A!%' ESCAPE '!'",
    'md5(s)',
    'sha(s)',
    'sha1(s)',
    'sha2(s, 256)',
    'hex(i)',
    "unhex('4142')",
    'year(d)',
    'quarter(d)',
    'month(d)',
    'weekofyear(d)',
    'day(d)',
    'dayofmonth(d)',
    'dayofweek(d)',
    'dayofyear(d)',
    'hour(ts)',
    'minute(ts)',
    'second(ts)',
    'last_day(d)',
    "next_day(d, 'MO')",
    'months_between(d, e)',
    'date_add(d, 1)',
    'date_sub(d, 1)',
    'datediff(d, e)',
    'date_diff(d, e)',
    "date_format(ts, 'yyyy-MM-dd HH:mm')",
    "date_format(d, 'EEE, d MMM yyyy')",
    "date_trunc('MONTH', ts)",
    "trunc(d, 'MM')",
    "to_timestamp(CASE WHEN ds LIKE '2%' THEN ds END)",
    "to_timestamp(CASE WHEN ds LIKE '2%' THEN ds END, 'yyyy-MM-dd')",
    "to_timestamp(CASE WHEN ds LIKE '0%' THEN ds END, 'dd/MM/yyyy')",
    "try_to_timestamp(CASE WHEN ds LIKE '0%' THEN ds END, 'dd/MM/yyyy')",
    "to_date(CASE WHEN ds LIKE '2%' THEN ds END)",
    "to_date(CASE WHEN ds LIKE '0%' THEN ds END, 'dd/MM/yyyy')",
    "to_date(CASE WHEN ds LIKE '2%' THEN ds END, 'yyyy-MM-dd')",
    'year(ts)',
    'month(ts)',
    'datediff(ts, d)',
    'extract(YEAR FROM d)',
    'extract(DOY FROM d)',
    "to_number('12', '99')",
    "try_to_number(ds, '99')",
    'size(a)',
    'array_size(a)',
    'cardinality(a)',
    'array_contains(a, 2)',
    'try_element_at(a, 1)',
    'filter(a, x -> x > 1)',
    'transform(a, x -> x * 2)',
    'forall(a, x -> x > 0)',
    'expm1(m)',
    'log1p(m)',
    'pmod(i, 2)',
    'i % 2',
    'i DIV 2',
    'mod(i, 2)',
    'isnull(n)',
    'isnotnull(n)',
    'octet_length(s)',
    'make_date(2024, 2, 29)',
    'hash(s)',
    'crc32(s)',
    'CAST(i AS BIGINT)',
    'TRY_CAST(i AS BIGINT)',
    'CAST(i AS STRING)',
    'CAST(i AS DECIMAL(10, 2))',
    'i::STRING',
    "CASE WHEN i > 0 THEN 'p' WHEN i < 0 THEN 'n' ELSE 'z' END",
    "CASE i WHEN 3 THEN 'three' END",
    'if(i > 0, 1, 2)',
    'i BETWEEN 0 AND 5',
    'i NOT BETWEEN 0 AND 5',
    'i IN (3, -7)',
    'i NOT IN (3)',
    'n <=> m',
    'n IS DISTINCT FROM m',
    'b IS TRUE',
    'b IS NOT FALSE',
    'NOT b',
    'b AND NOT b',
    'i & 3',
    'i | 8',
    'i ^ 1',
    '~i',
    'i << 2',
    'i >> 1',
    's || t',
    "'a' 'b'",
    '-i',
    '+i',
    'd + INTERVAL 1 DAY',
    "ts - INTERVAL '2' HOUR",
    "d > DATE '2021-01-01'",
    "ts > TIMESTAMP '2021-01-01 00:00:00'",
    "ts > TIMESTAMP_NTZ '2021-01-01 00:00:00'",
    'n > 0.1BD',
    'n < 1e+40D',
    'i = 3L',
    'i = 3S',
    'i = 3Y',
    'n > 1.5F',
    'n > 1E1',
    's = "Ab,c\\\\d"',
    "s = 'Ab,c\\\\\\\\d'",
    "s = 'it\\'s'",
    "s <> '\\u0041'",
    "s = '\\t'",
    "s = '\\%'",
    "s = 'Ab,c\\d'",
    "s LIKE '%\\\\_%'",
    "json_array_length('[1,2]')",
    'array_min(a)',
    'array_max(a)',
    'array_distinct(a)',
    "array_join(a, ',')",
    'sort_array(a)',
    'array_position(a, 2)',
    'arrays_overlap(a, a)',
    'array_except(a, a)',
    "split(s, ',')",
    "size(split(s, ','))",
    'unix_timestamp(ts)',
    'to_unix_timestamp(ts)',
    'timestamp_seconds(1)',
    "from_utc_timestamp(ts, 'UTC')",
    "to_utc_timestamp(ts, 'UTC')",
    "date_part('YEAR', d)",
    'dateadd(DAY, 1, d)',
    'add_months(d, 1)',
    'make_timestamp(2024, 1, 1, 0, 0, 0)',
    'equal_null(i, 3)',
    'nullifzero(i)',
    'zeroifnull(i)',
    'string(i)',
    'bigint(i)',
    'double(i)',
    'boolean(i)',
    'decimal(i)',
    "translate(s, 'A', 'a')",
    'soundex(s)',
    'char_length(trim(s)) > 0',
    'len(s)',
    'isnotnull(s) AND isnull(t)',
    'bit_count(i)',
    'bround(n, 1)',
    'e()',
    'pi()',
    'factorial(3)',
    'hypot(n, m)',
    'width_bucket(n, 0, 10, 5)',
    'try_to_date(ds)',
    'int(i)',
    "date(CASE WHEN ds LIKE '2%' THEN ds END)",
    "timestamp(CASE WHEN ds LIKE '2%' THEN ds END)",
)
FORMS_DDL = ("n double, m double, i int, s string, t string, d date, e date, ts timestamp, a array<int>, "
             "b boolean, ds string")


def test_contract_sql_runs_as_rendered_with_the_same_results(spark):
    rows = [(2.5, -1.0, 3, "Ab,c\\d", "b", date(2024, 3, 1), date(2024, 1, 31), datetime(2024, 3, 1, 12, 30, 5),
             [1, 2, 3], True, "2024-03-01"),
            (float("nan"), 0.0, -7, " x ", "", date(2020, 2, 29), date(2021, 2, 28), datetime(2020, 1, 1), [], False,
             "01/03/2024"),
            (None,) * 11]
    df = spark.createDataFrame(rows, FORMS_DDL)
    rendered = [check_expression(form) for form in ALLOWED_FORMS]
    assert [check_expression(text) for text in rendered] == rendered  # fixed points
    written = df.selectExpr(*[f"{form} AS c{i}" for i, form in enumerate(ALLOWED_FORMS)]).collect()
    run = df.selectExpr(*[f"{text} AS c{i}" for i, text in enumerate(rendered)]).collect()
    differ = [(form, text) for i, (form, text) in enumerate(zip(ALLOWED_FORMS, rendered))
              if repr([row[i] for row in written]) != repr([row[i] for row in run])]
    assert differ == []


def test_every_example_plan_passes_the_spark_side_check():
    """The compiler's own forms (IS NOT NULL, DATE/TIMESTAMP literals, BD/D numbers, RLIKE with
    backslashes, char_length, isnan, IN lists) render as the compiler writes them."""
    for path in sorted((ROOT / "contracts").glob("*.yaml")):
        plan = compile_plan(path).document
        assert read_document(json.loads(json.dumps(plan)))["fingerprint"] == plan["fingerprint"]
    forms = ["`v` IS NOT NULL", "(`v` IS NULL OR `v` >= 0.1BD)", "(`v` IS NULL OR `v` <= 1e+40D)",
             "(NOT isnan(`x`) AND `x` % 0.5BD = 0)", "(`d` IS NULL OR `d` >= DATE '2020-01-01')",
             "(`t` IS NULL OR `t` < TIMESTAMP '2020-01-01T00:00:00')", "`t` >= TIMESTAMP_NTZ '2020-01-01T00:00:00'",
             "(`s` IS NULL OR NOT `s` RLIKE '^[\\\\s\\\\p{Z}\\\\x{85}]*$')", "(`s` IS NULL OR char_length(`s`) <= 10)",
             "(`s` IS NULL OR `s` IN ('a\\'b', 'c\\\\d'))", "(`a b.c` IS NOT NULL AND NOT `we``ird` IN (1, -2))",
             "(`s` IS NULL OR trim(`s`) <> '')", "coalesce(NOT (`v` > 0), TRUE)",
             "(`s` IS NULL OR lower(CAST(`s` AS STRING)) IN (lower('x')))",
             "(`s` IS NULL OR try_to_timestamp(`s`, 'yyyy-MM-dd') IS NOT NULL)"]
    assert [check_expression(form) for form in forms] == forms


def test_a_gate_session_substitutes_no_variables_into_sql(spark):
    """Defence in depth for names and paths: contract SQL with '${' is refused anyway."""
    assert spark.sql("SELECT '${env:HOME}' AS v").first()["v"] == "${env:HOME}"


CONTROL_VALUES = ["a'b", "c\\d", "e\nf", "\tx\r", "\x00", "\x007", "\x1a\x08\x0c\x0b\x07\x7f\x1f", "ü€😀", "x\\u0041",
                  "a\\%_b"]


def test_string_literals_read_back_exactly_and_are_their_own_rendering(spark):
    literals = [string_literal(value) for value in CONTROL_VALUES]
    assert list(spark.sql("SELECT " + ", ".join(literals)).first()) == CONTROL_VALUES
    # (a NUL before an octal digit is written \000, which the renderer writes otherwise: a plan
    # holding one is refused on the Spark side, never misread)
    for literal in (lit for lit in literals if "\\000" not in lit):
        assert check_expression(f"`s` = {literal}") == f"`s` = {literal}"
