"""Nothing in a contract executes as unintended SQL: identifiers are back-quoted (an embedded
back-quote doubled), literals escaped, DQX list items stay literals, and rule ids become safe
constraint names. (test_spark_semantics.py runs the hostile cases on Spark.)"""

from __future__ import annotations

from _contract_texts import column, compile_text, contract, rule
from spark_jobs.table_ddl import constraint_names, create_table_statements


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


def test_constraint_names_are_plain_lower_case_words():
    quality = ("- type: custom\n  engine: spark-sql\n  name: \"Weird Name; DROP\"\n  implementation: v > 0\n"
               "- type: custom\n  engine: spark-sql\n  name: weird-name--drop\n  implementation: v > 1")
    plan = compile_text(contract(column("v", "int", "integer", quality=quality)))
    assert constraint_names(plan) == {"Weird Name; DROP": "cg_weird_name__drop", "weird-name--drop": "cg_weird_name__drop_2"}
