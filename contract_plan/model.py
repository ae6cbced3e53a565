"""The plan as the Spark side reads it: loaded once, checked once, typed, with its tables resolved.

:func:`load_plan` takes a plan document (a dict, a JSON file or JSON text: the format is
docs/plan-format.md), checks it (``contract_plan.document``) and returns a frozen :class:`Plan`.
Every step reads the plan's fields instead of re-deriving them: column types are already in
Spark's ``simpleString`` form, and every table address is already resolved against
``CONTRACT_GATE_HOME`` (``contract_plan.addresses``), so two steps of one submission cannot
resolve one table two ways. A step handed a :class:`Plan` uses it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, TypedDict

from contract_plan.addresses import candidate_address, resolve
from contract_plan.document import PlanError, read_document
from contract_plan.limits import Limits, limits_of
from contract_plan.spark_types import TypeSyntaxError, spark_type
from contract_plan.thresholds import satisfies


class Address(TypedDict, total=False):
    """A table as the plan names it (docs/plan-format.md, "Address"): ``kind`` ``path`` (with
    ``path``) or ``table`` (with ``name``), ``format``, a landing's reader ``options``, and the
    Airflow ``connection`` of an object-storage path."""

    kind: str
    path: str
    name: str
    format: str
    options: dict[str, str]
    connection: str


@dataclass(frozen=True)
class Column:
    name: str
    """The column in the data (the property's ``physicalName``, else its ``name``)."""
    type: str
    """Spark's ``DataType.simpleString()`` of the expected type."""
    nullable: bool = True
    classification: str | None = None
    description: str | None = None
    sample_allowed: bool = False
    allow_non_finite: bool = False
    label: str | None = None
    """The property's ``name``, where the contract gives a different ``physicalName``."""

    @property
    def classified(self) -> bool:
        return bool(self.classification)


@dataclass(frozen=True)
class Threshold:
    operator: str
    value: float | int | tuple[float | int, float | int]
    unit: str = "rows"

    def satisfied_by(self, measured: Any) -> bool:
        return satisfies(measured, self.operator, self.value)

    def as_json(self) -> dict[str, Any]:
        """As the plan and the report write it."""
        return {"operator": self.operator, "value": list(self.value) if isinstance(self.value, tuple) else self.value,
                "unit": self.unit}


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    scope: str
    severity: str
    columns: tuple[str, ...] = ()
    predicate: str | None = None
    passes_when: str | None = None
    filter: str | None = None
    query: str | None = None
    threshold: Threshold | None = None
    enforceable: bool = False
    nulls_distinct: bool = True
    metric: str | None = None
    function: str | None = None
    source: str | None = None
    description: str | None = None
    reason: str | None = None
    """Why the gate cannot run it (kind ``unsupported``): the report's reason."""


@dataclass(frozen=True)
class Tables:
    """The gate's tables, every path already absolute (``contract_plan.addresses.resolve``)."""

    landing: Address | None
    candidate_schema: Address | None
    target: Address | None
    quarantine: Address | None
    decisions: Address | None
    references: Mapping[str, Address] = field(default_factory=dict)


@dataclass(frozen=True)
class Freshness:
    column: str
    column_type: str
    max_age_seconds: int


@dataclass(frozen=True)
class Plan:
    fingerprint: str
    contract_id: str
    contract_version: str
    object: str
    environment: str | None
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    rules: tuple[Rule, ...]
    schema_policy: str
    delta_column_mapping: bool
    freshness: Freshness | None
    tables: Tables | None
    gate: Mapping[str, Any]
    """The resolved gate settings, camelCase as in the contract (read-only)."""
    document: dict[str, Any] = field(repr=False, compare=False)
    """The checked plan document itself (a private copy), for what travels as JSON."""

    @property
    def publication_mode(self) -> str:
        return (self.gate.get("publication") or {}).get("mode", "append")

    @property
    def column_labels(self) -> dict[str, str]:
        """The property name of each column whose ``physicalName`` differs from it."""
        return {column.name: column.label for column in self.columns if column.label}

    @property
    def limits(self) -> Limits:
        """The time budgets of its validation and of each contract query (``contract_plan.limits``)."""
        return limits_of(self.gate)

    @property
    def classified_columns(self) -> frozenset[str]:
        return frozenset(column.name for column in self.columns if column.classified)

    def column(self, name: str) -> Column | None:
        return next((column for column in self.columns if column.name == name), None)

    def candidate(self, submission_id: str) -> Address:
        """Where stage freezes a file landing of ``submission_id`` (resolved, as every table here)."""
        return candidate_address(self.require_tables().candidate_schema, self.object, submission_id)

    def require_tables(self) -> Tables:
        """The tables, for a step that writes them; a plan without gate settings has none."""
        if self.tables is None:
            raise PlanError("the plan has no tables: the contract has no contractGate settings")
        return self.tables


def load_plan(source: Plan | str | Path | dict[str, Any]) -> Plan:
    """The typed plan of ``source``: a :class:`Plan` (returned as it is), a plan dict, or a JSON
    file path or JSON text (which must carry its fingerprint). Raises ``PlanError``."""
    if isinstance(source, Plan):
        return source
    return _typed(read_document(source))


def _typed(document: dict[str, Any]) -> Plan:
    contract = document["contract"]
    freshness = document.get("freshness")
    return Plan(
        fingerprint=document["fingerprint"],
        contract_id=str(contract["id"]),
        contract_version=str(contract["version"]),
        object=document["object"],
        environment=document.get("environment"),
        columns=tuple(_column(column) for column in document["columns"]),
        key=tuple(document["key"]),
        rules=tuple(_rule(rule) for rule in document["rules"]),
        schema_policy=document["schema_policy"],
        delta_column_mapping=bool(document.get("delta_column_mapping")),
        freshness=Freshness(freshness["column"], freshness["column_type"], int(freshness["max_age_seconds"]))
        if freshness else None,
        tables=_tables(document.get("tables")),
        gate=_frozen(document.get("gate") or {}),
        document=document,
    )


def _column(column: dict[str, Any]) -> Column:
    try:
        type_string = spark_type(column["type"])
    except TypeSyntaxError as exc:
        raise PlanError(f"column {column['name']!r}: {exc}") from None
    return Column(
        name=column["name"],
        type=type_string,
        label=column.get("label"),
        nullable=bool(column.get("nullable", True)),
        classification=column.get("classification"),
        description=column.get("description"),
        sample_allowed=bool(column.get("sample_allowed")),
        allow_non_finite=bool(column.get("allow_non_finite")),
    )


def _rule(rule: dict[str, Any]) -> Rule:
    threshold = rule.get("threshold")
    if threshold is not None:
        value = threshold["value"]
        threshold = Threshold(threshold["operator"], tuple(value) if isinstance(value, list) else value,
                              threshold.get("unit", "rows"))
    return Rule(
        id=rule["id"],
        kind=rule["kind"],
        scope=rule["scope"],
        severity=rule["severity"],
        columns=tuple(rule["columns"]),
        predicate=rule.get("predicate"),
        passes_when=rule.get("passes_when"),
        filter=rule.get("filter"),
        query=rule.get("query"),
        threshold=threshold,
        enforceable=bool(rule.get("enforceable")),
        nulls_distinct=rule.get("nulls_distinct", True) is not False,
        metric=rule.get("metric"),
        function=rule.get("function"),
        source=rule.get("source"),
        description=rule.get("description"),
        reason=rule.get("reason"),
    )


def _tables(tables: dict[str, Any] | None) -> Tables | None:
    if not tables:
        return None

    def resolved(name: str) -> Address | None:
        address = tables.get(name)
        return resolve(address) if address else None

    return Tables(
        landing=resolved("landing"),
        candidate_schema=resolved("candidate_schema"),
        target=resolved("target"),
        quarantine=resolved("quarantine"),
        decisions=resolved("decisions"),
        references=MappingProxyType({alias: resolve(address)
                                     for alias, address in sorted((tables.get("references") or {}).items())}),
    )


def _frozen(value: Any) -> Any:
    """A read-only deep view of JSON data: a step can read the plan but never change it."""
    if isinstance(value, dict):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value
