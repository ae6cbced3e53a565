"""Target-table DDL and the compatibility check, both derived from the plan.

The CHECK constraints use exactly the rule predicates that validation evaluates, so the table
and the validator cannot drift apart. Standard library only: the Airflow side prints the DDL
(``contract-gate plan --ddl``) and the publish job runs it, from this one implementation.
"""

from __future__ import annotations

import re

from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.ownership import owner_properties, properties_clause
from contract_gate_plan.sql_text import quote_identifier, string_literal

CONSTRAINT_PREFIX = "cg_"


def constraint_names(plan: Plan | dict) -> dict[str, str]:
    """rule id -> Delta constraint name for every rule Delta enforces as a CHECK.

    A column's ``required`` rule is enforced by a NOT NULL column instead (a nested field's,
    ``address.city``, is a CHECK). Delta stores constraint names lower-cased, so names are
    lower-case ``[a-z0-9_]`` and made unique deterministically."""
    plan = load_plan(plan)
    names: dict[str, str] = {}
    used: set[str] = set()
    for rule in plan.rules:
        if not rule.enforceable or (rule.kind == "required" and _is_not_null(rule)):
            continue
        base = CONSTRAINT_PREFIX + re.sub(r"[^a-z0-9_]", "_", rule.id.lower())
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        names[rule.id] = name
    return names


def _is_not_null(rule) -> bool:
    """Whether a rule says only that its one column is not NULL (what a NOT NULL column holds)."""
    return len(rule.columns) == 1 and rule.predicate == f"{quote_identifier(rule.columns[0])} IS NOT NULL"


def expected_constraints(plan: Plan | dict) -> dict[str, str]:
    """constraint name -> CHECK expression text."""
    plan = load_plan(plan)
    rules = {rule.id: rule for rule in plan.rules}
    return {name: rules[rule_id].require_predicate() for rule_id, name in constraint_names(plan).items()}


def table_properties(plan: Plan | dict) -> dict[str, str]:
    plan = load_plan(plan)
    properties = {}
    if plan.delta_column_mapping:
        # Column names with spaces, commas, braces... need Delta column mapping.
        properties.update({"delta.columnMapping.mode": "name", "delta.minReaderVersion": "2",
                           "delta.minWriterVersion": "5"})
    return properties


def create_table_statements(plan: Plan | dict, address: Address | dict | None = None) -> list[str]:
    """CREATE TABLE + one ALTER TABLE ... ADD CONSTRAINT per enforceable rule, in plan order."""
    plan = load_plan(plan)
    table = target_reference(plan, address)
    columns = []
    for column in plan.columns:
        # The plan's type text is valid DDL (a struct field name other than a plain word is
        # back-quoted, see contract_gate_plan.spark_types); upper-casing it would rename fields.
        text = f"  {quote_identifier(column.name)} {column.type}"
        if not column.nullable:
            text += " NOT NULL"
        if column.description:
            text += f" COMMENT {string_literal(column.description)}"
        columns.append(text)
    statement = f"CREATE TABLE IF NOT EXISTS {table} (\n" + ",\n".join(columns) + "\n) USING DELTA"
    # the ownership properties first: every write step checks them (contract_gate_plan.ownership)
    properties = {**owner_properties(plan.contract_id, "target"), **table_properties(plan)}
    statement += f"\nTBLPROPERTIES ({properties_clause(properties)})"
    statements = [statement]
    for name, predicate in expected_constraints(plan).items():
        statements.append(f"ALTER TABLE {table} ADD CONSTRAINT {quote_identifier(name)} CHECK ({predicate})")
    return statements


def target_reference(plan: Plan, address: Address | dict | None) -> str:
    """SQL for ``address``, else for the plan's target as the plan writes it (reviewable DDL)."""
    if address is not None:
        return Address.of(address).sql_name
    return Address.as_written(plan.document["tables"]["target"]).sql_name


def render_ddl(plan: Plan | dict, address: Address | dict | None = None) -> str:
    plan = load_plan(plan)
    return ";\n\n".join(create_table_statements(plan, address)) + ";\n"


# Quoted text (kept whole, escapes included), or any single non-space character run of a word.
_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`|\w+|\S")


def _tokens(expression: str) -> list[str]:
    """Delta stores a CHECK expression re-spaced token by token (``( `a` IS NULL OR `a` >= 0 )``),
    so expressions are compared as token lists, never as text."""
    return _TOKEN.findall(expression)


def same_check(deployed: str, planned: str) -> bool:
    """Whether a CHECK expression as Delta keeps it is the plan's (token by token)."""
    return _tokens(deployed) == _tokens(planned)


def compatibility_differences(plan: Plan | dict, fields: list[tuple[str, str, bool]], properties: dict[str, str]) -> list[str]:
    """Differences between a deployed table and the plan, one readable line each ([] = compatible).

    ``fields`` are (name, Spark simpleString type, nullable) of the table's schema; ``properties``
    its table properties, where Delta keeps constraints as ``delta.constraints.<name>``."""
    plan = load_plan(plan)
    differences = []
    deployed = {name: (type_, nullable) for name, type_, nullable in fields}
    for column in plan.columns:
        name = column.name
        if name not in deployed:
            differences.append(f"column {name!r} is missing from the table")
            continue
        type_, nullable = deployed[name]
        if type_ != column.type:
            differences.append(f"column {name!r} has type {type_}, the plan says {column.type}")
        if nullable and not column.nullable:
            differences.append(f"column {name!r} is nullable in the table, the plan says NOT NULL")
        if not nullable and column.nullable:
            differences.append(f"column {name!r} is NOT NULL in the table, the plan allows NULL")
    planned = {c.name for c in plan.columns}
    for name in deployed:
        if name not in planned:
            differences.append(f"column {name!r} is in the table but not in the plan")
    for key, value in table_properties(plan).items():
        if key == "delta.columnMapping.mode" and properties.get(key) != value:
            differences.append(f"table property {key} is {properties.get(key)!r}, the plan needs {value!r}")
    expected = expected_constraints(plan)
    actual = {key[len("delta.constraints."):]: value for key, value in properties.items()
              if key.startswith("delta.constraints.")}
    for name, predicate in expected.items():
        if name not in actual:
            differences.append(f"constraint {name!r} is missing from the table")
        elif not same_check(actual[name], predicate):
            differences.append(f"constraint {name!r} differs: table has {actual[name]!r}, plan has {predicate!r}")
    for name in actual:
        if name not in expected:
            differences.append(f"constraint {name!r} is on the table but not in the plan")
    return differences
