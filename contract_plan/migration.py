"""Moving a deployed target to a new plan, when the two differ only by non-breaking changes.

One function, :func:`plan_migration`, reads a deployed table (its fields and table properties)
against a plan and gives the statements that move it: ``ADD COLUMNS`` for new nullable columns,
``DROP NOT NULL`` for columns no longer required, and a CHECK constraint dropped (a removed
rule) or dropped and added again (a relaxed rule, by ``contract_plan.predicate_scope``), with
the text of ``table_ddl.expected_constraints``. Anything else (a column removed or retyped, a
column made required, a rule tightened or new on published data) is breaking: listed, and
never migrated. The publish step applies the statements, ``contract-gate plan --migrate``
prints them, and the ``evolution: manual`` gate setting refuses with them.

Kill-safe: Delta commits each statement on its own, so the first one records the migration's
intent in a table property (the constraints it adds); a run after a kill reads the intent and
goes on where it stopped, checking the table's state before each statement
(:meth:`Step.done`). The last ones set the table's schema version and forget the intent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from contract_plan.model import Plan, load_plan
from contract_plan.predicate_scope import Scope, compare_predicates
from contract_plan.spark_types import type_change
from contract_plan.sql_text import quote_identifier, string_literal, table_reference
from contract_plan.table_ddl import constraint_names, expected_constraints, same_check

SCHEMA_VERSION_PROPERTY = "contract_gate.schema_version"
"""The contract version whose plan last set the table's schema (at creation or by a migration)."""
INTENT_PROPERTY = "contract_gate.migration"
_CONSTRAINT_PREFIX = "delta.constraints."

Fields = list[tuple[str, str, bool]]  # (name, Spark simpleString type, nullable), as the table has them


@dataclass(frozen=True)
class Step:
    action: str  # begin | drop_constraint | drop_not_null | add_column | add_constraint | finish | forget
    name: str  # the column, constraint or property it changes
    value: str | None  # the constraint text, the column type or the property value it leaves
    statement: str

    def done(self, fields: Fields, properties: dict[str, str]) -> bool:
        """Whether the table already is as this step leaves it (it was applied before a kill)."""
        columns = {name: nullable for name, _, nullable in fields}
        constraint = properties.get(_CONSTRAINT_PREFIX + self.name)
        return {
            "begin": lambda: properties.get(INTENT_PROPERTY) == self.value,
            "drop_constraint": lambda: constraint is None,
            "drop_not_null": lambda: columns.get(self.name) is True,
            "add_column": lambda: self.name in columns,
            "add_constraint": lambda: constraint is not None and same_check(constraint, self.value),
            "finish": lambda: properties.get(SCHEMA_VERSION_PROPERTY) == self.value,
            "forget": lambda: INTENT_PROPERTY not in properties,
        }[self.action]()


@dataclass(frozen=True)
class Migration:
    from_version: str | None
    """The contract version the table's schema came from (None: unknown, an older table)."""
    to_version: str
    steps: tuple[Step, ...]
    breaking: tuple[str, ...]
    """Differences no migration makes, one readable line each: the table is refused."""

    @property
    def statements(self) -> list[str]:
        return [step.statement for step in self.steps]

    def as_json(self) -> dict:
        return {"from_version": self.from_version, "to_version": self.to_version,
                "statements": self.statements, "breaking": list(self.breaking)}


def plan_migration(plan: Plan | dict, fields: Fields, properties: dict[str, str], address: dict | None = None) -> Migration:
    """The migration from the deployed table (``fields``, ``properties``) to ``plan``; no steps
    when the table already matches, ``breaking`` lines when it cannot be migrated."""
    plan = load_plan(plan)
    table = table_reference(address or plan.document["tables"]["target"])
    intent = _intent(properties, plan)
    deployed = {name: (type_, nullable) for name, type_, nullable in fields}
    breaking: list[str] = []
    columns: list[Step] = []
    for column in plan.columns:
        name = quote_identifier(column.name)
        if column.name not in deployed:
            if column.nullable:
                comment = f" COMMENT {string_literal(column.description)}" if column.description else ""
                columns.append(Step("add_column", column.name, column.type,
                                    f"ALTER TABLE {table} ADD COLUMNS ({name} {column.type}{comment})"))
            else:
                breaking.append(f"column {column.name!r} is new and required: rows already published have no value")
            continue
        type_, nullable = deployed[column.name]
        if type_ != column.type:
            breaking.append(f"column {column.name!r} has type {type_} in the table, the plan says {column.type} "
                            f"({type_change(type_, column.type)}): the gate does not retype a column")
        if nullable and not column.nullable:
            breaking.append(f"column {column.name!r} is nullable in the table, the plan says NOT NULL")
        elif column.nullable and not nullable:
            columns.insert(0, Step("drop_not_null", column.name, None,
                                   f"ALTER TABLE {table} ALTER COLUMN {name} DROP NOT NULL"))
    planned = {column.name for column in plan.columns}
    breaking += [f"column {name!r} is in the table but not in the plan (removed or renamed)"
                 for name in deployed if name not in planned]
    if plan.delta_column_mapping and properties.get("delta.columnMapping.mode") != "name":
        breaking.append("the plan needs Delta column mapping, which the table does not have")
    new_columns = {step.name for step in columns if step.action == "add_column"}
    drops, adds = _constraint_steps(plan, table, properties, new_columns, intent, breaking)
    from_version = intent["from"] if intent else properties.get(SCHEMA_VERSION_PROPERTY)
    structural = [*drops, *columns, *adds]
    if breaking or not (structural or intent):  # an intent with nothing left: killed before it finished
        return Migration(from_version, plan.contract_version, tuple(structural), tuple(breaking))
    begin = json.dumps(intent or {"from": from_version, "to": plan.contract_version, "fingerprint": plan.fingerprint,
                                  "add": sorted(step.name for step in adds)}, sort_keys=True)
    steps = [Step("begin", INTENT_PROPERTY, begin, _set_property(table, INTENT_PROPERTY, begin)), *structural,
             Step("finish", SCHEMA_VERSION_PROPERTY, plan.contract_version,
                  _set_property(table, SCHEMA_VERSION_PROPERTY, plan.contract_version)),
             Step("forget", INTENT_PROPERTY, None,
                  f"ALTER TABLE {table} UNSET TBLPROPERTIES IF EXISTS ({string_literal(INTENT_PROPERTY)})")]
    return Migration(from_version, plan.contract_version, tuple(steps), ())


def _constraint_steps(plan: Plan, table: str, properties: dict[str, str], new_columns: set[str],
                      intent: dict | None, breaking: list[str]) -> tuple[list[Step], list[Step]]:
    expected = expected_constraints(plan)
    actual = {key[len(_CONSTRAINT_PREFIX):]: value for key, value in properties.items()
              if key.startswith(_CONSTRAINT_PREFIX)}
    columns_of = {name: set(next(r.columns for r in plan.rules if r.id == rule_id))
                  for rule_id, name in constraint_names(plan).items()}
    approved = set(intent["add"]) if intent else set()
    drops, adds = [], []
    for name, check in expected.items():
        add = Step("add_constraint", name, check,
                   f"ALTER TABLE {table} ADD CONSTRAINT {quote_identifier(name)} CHECK ({check})")
        if name in actual:
            if same_check(actual[name], check):
                continue
            comparison = compare_predicates(actual[name], check)
            if comparison.scope in (Scope.WIDER, Scope.SAME):
                drops.append(_drop(table, name))
                adds.append(add)
            else:
                breaking.append(f"constraint {name!r} is {comparison.scope.value} in the plan: {comparison.reason}")
        elif name in approved or (columns_of[name] and columns_of[name] <= new_columns):
            adds.append(add)  # on new columns only, or the rest of a migration a kill stopped
        else:
            breaking.append(f"constraint {name!r} is new: a new error rule on data already published")
    drops += [_drop(table, name) for name in actual if name not in expected]
    return drops, adds


def _drop(table: str, name: str) -> Step:
    return Step("drop_constraint", name, None, f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {quote_identifier(name)}")


def _set_property(table: str, key: str, value: str) -> str:
    return f"ALTER TABLE {table} SET TBLPROPERTIES ({string_literal(key)} = {string_literal(value)})"


def _intent(properties: dict[str, str], plan: Plan) -> dict | None:
    """The intent a killed migration to this very plan left, or None."""
    try:
        intent = json.loads(properties.get(INTENT_PROPERTY) or "null")
    except ValueError:
        return None
    if isinstance(intent, dict) and intent.get("fingerprint") == plan.fingerprint and isinstance(intent.get("add"), list):
        return intent
    return None
