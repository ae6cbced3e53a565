"""Moving a deployed target to a new plan, when the two differ only by non-breaking changes.

One function, :func:`plan_migration`, reads a deployed table (its fields and table properties)
against a plan and gives the statements that move it: ``ADD COLUMNS`` for new nullable columns,
``DROP NOT NULL`` for columns no longer required, and a CHECK constraint dropped (a removed
rule) or dropped and added again (a relaxed rule, by ``contract_gate_plan.predicate_scope``), with
the text of ``table_ddl.expected_constraints``. Anything else (a column removed or retyped, a
column made required, a rule tightened or new on published data) is breaking: listed, and
never migrated, unless the migration is told to allow breaking changes (``allow_breaking``: the
gate's ``evolution.breaking: allow`` on a new major version): then what Delta can change in
place is changed too (a column dropped, under column mapping; a column made NOT NULL; a rule
tightened or added), Delta checking the rows already published as it adds each constraint,
and only the rest (a retyped column, a new required one) is refused. The publish step applies the statements, ``contract-gate plan --migrate``
prints them, and the ``evolution: manual`` gate setting refuses with them.

Kill-safe: Delta commits each statement on its own, so the first one records the migration's
intent in a table property (the constraints it adds, its statements); a run after a kill reads
the intent and goes on where it stopped, checking the table's state before each statement
(:meth:`Step.done`). The last ones set the table's schema version and forget the intent.

Durable: the intent's two commits, set and forgotten, stay in the table's history, so a
migration whose run died before recording it is found there (:func:`finished_migrations`) and
recorded by the next run's recovery, under the same :func:`migration_id`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.predicate_scope import Scope, compare_predicates
from contract_gate_plan.spark_types import type_change
from contract_gate_plan.sql_text import quote_identifier, string_literal
from contract_gate_plan.table_ddl import constraint_names, expected_constraints, same_check, target_reference

SCHEMA_VERSION_PROPERTY = "contract_gate.schema_version"
"""The contract version whose plan last set the table's schema (at creation or by a migration)."""
INTENT_PROPERTY = "contract_gate.migration"
_CONSTRAINT_PREFIX = "delta.constraints."
_MAJOR = re.compile(r"v?(0|[1-9]\d*)\.\d+\.\d+(?:[-+].*)?")
_COLUMN_MAPPING = {"delta.columnMapping.mode": "name", "delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}

Fields = list[tuple[str, str, bool]]  # (name, Spark simpleString type, nullable), as the table has them


@dataclass(frozen=True)
class Step:
    # begin | drop_constraint | drop_not_null | map_columns | drop_column | add_column | set_not_null
    # | add_constraint | finish | forget
    action: str
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
            "map_columns": lambda: properties.get("delta.columnMapping.mode") == "name",
            "drop_column": lambda: self.name not in columns,
            "set_not_null": lambda: columns.get(self.name) is False,
            "add_column": lambda: self.name in columns,
            "add_constraint": lambda: constraint is not None and self.value is not None and same_check(constraint, self.value),
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
    fingerprint: str = ""
    """The plan's fingerprint: with the table version it leaves, it names the migration."""
    allowed: tuple[str, ...] = ()
    """Breaking differences the steps make, because the migration was told to allow them."""

    @property
    def statements(self) -> list[str]:
        return [step.statement for step in self.steps]

    def as_json(self) -> dict:
        return {"from_version": self.from_version, "to_version": self.to_version, "fingerprint": self.fingerprint,
                "statements": self.statements, "breaking": list(self.breaking),
                "breaking_applied": list(self.allowed)}


def major_version(version: str | None) -> int | None:
    """The major number of a semantic version (``2`` of ``2.1.0`` or ``v2.1.0-rc.1``), or None."""
    match = _MAJOR.fullmatch(str(version or ""))
    return int(match.group(1)) if match else None


def governed_migration(plan: Plan | dict, fields: Fields, properties: dict[str, str],
                        address=None) -> tuple[Migration, bool]:
    """:func:`plan_migration` as the gate settings govern it, and whether breaking differences
    are allowed: they are when ``evolution.breaking`` is ``allow`` and the contract's major
    version is above the table's schema version (a table of unknown version is refused)."""
    plan = load_plan(plan)
    migration = plan_migration(plan, fields, properties, address)
    evolution = plan.gate.get("evolution") or {}
    before, after = major_version(migration.from_version), major_version(plan.contract_version)
    allowed = (bool(migration.breaking) and evolution.get("breaking") == "allow"
               and before is not None and after is not None and after > before)
    return (plan_migration(plan, fields, properties, address, allow_breaking=True) if allowed else migration), allowed


def versioned_suffix(breaking: str | None, version: str | None) -> str:
    """``_v<major>``, the suffix of a contract's tables (and target Asset) when its evolution
    setting is ``breaking: newTarget`` and ``version`` is 2.0.0 or later; else ``""``."""
    major = major_version(version) if breaking == "newTarget" else None
    return f"_v{major}" if major is not None and major >= 2 else ""


def plan_migration(plan: Plan | dict, fields: Fields, properties: dict[str, str], address: Address | None = None,
                   allow_breaking: bool = False) -> Migration:
    """The migration from the deployed table (``fields``, ``properties``) to ``plan``; no steps
    when the table already matches, ``breaking`` lines when it cannot be migrated. With
    ``allow_breaking``, the breaking differences Delta can make in place are steps too, listed
    in ``allowed``."""
    plan = load_plan(plan)
    table = target_reference(plan, address)
    intent = _intent(properties, plan)
    deployed = {name: (type_, nullable) for name, type_, nullable in fields}
    breaking: list[str] = []
    allowed: list[str] = []
    columns: list[Step] = []
    tightened: list[Step] = []  # the allowed breaking steps on columns, after the rest
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
            line = f"column {column.name!r} is nullable in the table, the plan says NOT NULL"
            if allow_breaking:
                allowed.append(line)
                tightened.append(Step("set_not_null", column.name, None,
                                      f"ALTER TABLE {table} ALTER COLUMN {name} SET NOT NULL"))
            else:
                breaking.append(line)
        elif column.nullable and not nullable:
            columns.insert(0, Step("drop_not_null", column.name, None,
                                   f"ALTER TABLE {table} ALTER COLUMN {name} DROP NOT NULL"))
    planned = {column.name for column in plan.columns}
    removed = [name for name in deployed if name not in planned]
    lines = [f"column {name!r} is in the table but not in the plan (removed or renamed)" for name in removed]
    unmapped = properties.get("delta.columnMapping.mode") != "name"
    if allow_breaking and removed:
        allowed += lines
        mapping = ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in _COLUMN_MAPPING.items())
        dropped = [Step("drop_column", name, None, f"ALTER TABLE {table} DROP COLUMN {quote_identifier(name)}")
                   for name in removed]
        # Delta drops a column only from a table with column mapping
        columns[:0] = [*([Step("map_columns", "delta.columnMapping.mode", "name",
                                f"ALTER TABLE {table} SET TBLPROPERTIES ({mapping})")] if unmapped else []), *dropped]
    else:
        breaking += lines
    if plan.delta_column_mapping and unmapped:
        breaking.append("the plan needs Delta column mapping, which the table does not have")
    new_columns = {step.name for step in columns if step.action == "add_column"}
    drops, adds = _constraint_steps(plan, table, properties, new_columns, intent, breaking,
                                    allowed if allow_breaking else None)
    from_version = intent["from"] if intent else properties.get(SCHEMA_VERSION_PROPERTY)
    structural = [*drops, *columns, *tightened, *adds]
    if breaking or not (structural or intent):  # an intent with nothing left: killed before it finished
        return Migration(from_version, plan.contract_version, tuple(structural), tuple(breaking), plan.fingerprint)
    begin = json.dumps(intent or {"from": from_version, "to": plan.contract_version, "fingerprint": plan.fingerprint,
                                  "add": sorted(step.name for step in adds), "breaking": allowed,
                                  "statements": [step.statement for step in structural]}, sort_keys=True)
    steps = [Step("begin", INTENT_PROPERTY, begin, _set_property(table, INTENT_PROPERTY, begin)), *structural,
             Step("finish", SCHEMA_VERSION_PROPERTY, plan.contract_version,
                  _set_property(table, SCHEMA_VERSION_PROPERTY, plan.contract_version)),
             Step("forget", INTENT_PROPERTY, None,
                  f"ALTER TABLE {table} UNSET TBLPROPERTIES IF EXISTS ({string_literal(INTENT_PROPERTY)})")]
    return Migration(from_version, plan.contract_version, tuple(steps), (), plan.fingerprint, tuple(allowed))


def _constraint_steps(plan: Plan, table: str, properties: dict[str, str], new_columns: set[str],
                      intent: dict | None, breaking: list[str], allowed: list[str] | None
                      ) -> tuple[list[Step], list[Step]]:
    """The constraint drops and adds; a breaking difference goes to ``allowed`` (and is made)
    when that is a list, else to ``breaking``."""
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
            line = f"constraint {name!r} is {comparison.scope.value} in the plan: {comparison.reason}"
            if comparison.scope in (Scope.WIDER, Scope.SAME) or allowed is not None:
                drops.append(_drop(table, name))
                adds.append(add)
                if comparison.scope not in (Scope.WIDER, Scope.SAME) and allowed is not None:
                    allowed.append(line)
            else:
                breaking.append(line)
        elif name in approved or (columns_of[name] and columns_of[name] <= new_columns):
            adds.append(add)  # on new columns only, or the rest of a migration a kill stopped
        elif allowed is not None:
            allowed.append(f"constraint {name!r} is new: a new error rule on data already published")
            adds.append(add)
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


def migration_id(fingerprint: str, target_version_after: int) -> str:
    """The decision log's id of a migration: its plan and the table version it left."""
    return f"migration-{fingerprint[:16]}-{target_version_after}"


@dataclass(frozen=True)
class HistoryEntry:
    """One commit of a table's history as both history readers give it (``DESCRIBE HISTORY``,
    ``deltalake``): ``parameters`` are the commit's operationParameters, values as text."""

    version: int
    timestamp: datetime
    operation: str
    parameters: dict[str, str]


@dataclass(frozen=True)
class FinishedMigration:
    """A migration the history shows from its intent's commit to the commit that forgot it."""

    intent: dict
    version_before: int
    version_after: int
    finished_at: datetime

    @property
    def id(self) -> str:
        return migration_id(self.intent["fingerprint"], self.version_after)

    def statements(self, table: str) -> list[str]:
        """Its statements on ``table``, as the run that applied them had them."""
        return [_set_property(table, INTENT_PROPERTY, json.dumps(self.intent, sort_keys=True)),
                *self.intent.get("statements", []),
                _set_property(table, SCHEMA_VERSION_PROPERTY, self.intent["to"]),
                f"ALTER TABLE {table} UNSET TBLPROPERTIES IF EXISTS ({string_literal(INTENT_PROPERTY)})"]


def finished_migrations(history: list[HistoryEntry]) -> list[FinishedMigration]:
    """The migrations that ``history`` (any order) shows finished, oldest first: each intent set
    (``SET TBLPROPERTIES``) and later forgotten (``UNSET TBLPROPERTIES``). A migration that a kill
    stopped and a later run finished has one of each too: its intent is set once."""
    finished, intent, begun = [], None, None
    for entry in sorted(history, key=lambda e: e.version):
        if entry.operation == "SET TBLPROPERTIES":
            value = _json(entry.parameters.get("properties"), dict).get(INTENT_PROPERTY)
            found = _json(value, dict) if value is not None else {}
            if {"from", "to", "fingerprint"} <= set(found) and found != intent:  # a twin's second set is no begin
                intent, begun = found, entry.version
        elif entry.operation == "UNSET TBLPROPERTIES" and intent is not None and begun is not None \
                and INTENT_PROPERTY in _json(entry.parameters.get("properties"), list):
            finished.append(FinishedMigration(intent, begun - 1, entry.version, entry.timestamp))
            intent = None
    return finished


def _json(text: str | None, kind: type) -> Any:
    """``text`` parsed as JSON of ``kind``, else an empty one (history written by other tools)."""
    try:
        value = json.loads(text or "null")
    except ValueError:
        return kind()
    return value if isinstance(value, kind) else kind()
