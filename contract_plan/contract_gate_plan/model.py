"""The plan as the Spark side reads it: loaded once, checked once, typed, with its tables resolved.

:func:`load_plan` takes a plan document (a dict, a JSON file or JSON text: the format is
docs/plan-format.md), checks it (``contract_gate_plan.document``) and returns a frozen :class:`Plan`.
Both sides read the plan's fields instead of re-deriving them: column types are already in
Spark's ``simpleString`` form, and every table :class:`Address` is already resolved against
``CONTRACT_GATE_HOME`` (``contract_gate_plan.addresses``), so two steps of one submission cannot
resolve one table two ways. A step handed a :class:`Plan` uses it as it is; what travels (the
Spark job's plan file, a fingerprint) is its ``document``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from contract_gate_plan.addresses import Address, candidate_address
from contract_gate_plan.batch_history import History, history_of
from contract_gate_plan.document import PlanError, read_document
from contract_gate_plan.limits import Limits, limits_of
from contract_gate_plan.names import gate_names
from contract_gate_plan.spark_types import TypeSyntaxError, spark_type
from contract_gate_plan.thresholds import satisfies


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
    json_text: bool = False
    """Its values are JSON text (the plan holds its ``json`` rule: ``json``, ``jsonb``, a
    warehouse's ``variant``...), so in a JSON landing any JSON value fits, kept as its text."""

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
    reference: Reference | None = None
    """What a foreign key (kind ``references``) looks its keys up in."""
    history: History | None = None
    """A history rule's bounds (``contract_gate_plan.batch_history``): judged against the last
    accepted batches instead of a threshold."""

    def require_predicate(self) -> str:
        """The predicate of a row or metric rule (the plan's check gives each one)."""
        if self.predicate is None:
            raise PlanError(f"rule {self.id!r} has no predicate")
        return self.predicate

    def require_query(self) -> str:
        """The query of a ``type: sql`` rule (the plan's check gives each one)."""
        if self.query is None:
            raise PlanError(f"rule {self.id!r} has no query")
        return self.query


@dataclass(frozen=True)
class Reference:
    """A foreign key's referenced object: its contract and name, its key columns (in the order of
    the rule's columns) and its published target's address."""

    contract: str
    object: str
    columns: tuple[str, ...]
    table: Address


@dataclass(frozen=True)
class Tables:
    """The gate's tables, every path already absolute (``contract_gate_plan.addresses.resolve``)."""

    landing: Address | None
    candidate_schema: Address | None
    target: Address | None
    quarantine: Address | None
    decisions: Address | None
    references: Mapping[str, Address] = field(default_factory=dict)

    def require_candidate_schema(self) -> Address:
        return _required(self.candidate_schema, "candidate_schema")

    def require_target(self) -> Address:
        return _required(self.target, "target")

    def require_quarantine(self) -> Address:
        return _required(self.quarantine, "quarantine")

    def require_decisions(self) -> Address:
        return _required(self.decisions, "decisions")


def _required(address: Address | None, role: str) -> Address:
    """An address a step reads or writes; a plan whose gate settings lack it cannot run that step."""
    if address is None:
        raise PlanError(f"the plan has no {role} (plan.tables.{role})")
    return address


@dataclass(frozen=True)
class Freshness:
    column: str
    column_type: str
    max_age_seconds: int
    sla_property: str = "freshness"
    """The ODCS SLA property it comes from (``freshness`` or ``latency``), with its ``value`` and ``unit``."""
    value: float | int | None = None
    unit: str | None = None

    @property
    def sla(self) -> dict[str, Any]:
        """The SLA as the contract states it, for status records and messages."""
        return {"property": self.sla_property, "value": self.value, "unit": self.unit, "column": self.column}


@dataclass(frozen=True)
class Names:
    """The names derived for one object's gate (``contract_gate_plan.names.gate_names``)."""

    dag_id: str
    group: str
    gate: str
    asset: str

    @property
    def sole(self) -> bool:
        """Whether the gate is its contract's only one (its folder is the DAG id alone)."""
        return self.gate == self.dag_id


@dataclass(frozen=True)
class Access:
    """Who may read the gate's tables (the contract's ODCS roles): consumers read the target,
    owners also the quarantine and its candidates."""

    consumers: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    fingerprint: str
    contract_id: str
    contract_version: str
    object: str
    environment: str | None
    names: Names
    contract_name: str | None
    contract_domain: str | None
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    rules: tuple[Rule, ...]
    schema_policy: str
    delta_column_mapping: bool
    freshness: Freshness | None
    tables: Tables | None
    gate: Mapping[str, Any]
    """The resolved gate settings, camelCase as in the contract (read-only)."""
    access: Access | None
    document: dict[str, Any] = field(repr=False, compare=False)
    """The checked plan document itself (a private copy), for what travels as JSON."""

    @property
    def publication_mode(self) -> str:
        return (self.gate.get("publication") or {}).get("mode", "append")

    @property
    def violations(self) -> Mapping[str, Any]:
        """The gate's ``violations`` settings (``policy``, ``maxInvalidRows``...); empty without gate settings."""
        return self.gate.get("violations") or {}

    @property
    def violation_policy(self) -> str | None:
        return self.violations.get("policy")

    @property
    def alerts(self) -> Mapping[str, Any]:
        """The gate's ``alerts`` settings (``notifiers``, ``onRejection``, ``freshnessSchedule``...)."""
        return self.gate.get("alerts") or {}

    @property
    def schedule(self) -> Mapping[str, Any] | str | None:
        """The gate's ``schedule``: a cron or preset string, ``{onLanding: ...}``, or None when the
        gate runs when triggered."""
        return self.gate.get("schedule")

    @property
    def retention(self) -> Mapping[str, Any]:
        return self.gate.get("retention") or {}

    @property
    def execution(self) -> Mapping[str, Any]:
        """The contract's ``execution`` settings (``mode``, ``connectionId``)."""
        return self.gate.get("execution") or {}

    @property
    def connection_id(self) -> str | None:
        """The Airflow connection the contract's execution names."""
        return self.execution.get("connectionId")

    @property
    def notifiers(self) -> list[dict[str, Any]]:
        """The ``alerts.notifiers`` references (freshness notices), as plain JSON to build notifiers from."""
        return _thawed(self.alerts.get("notifiers") or ())

    @property
    def rejection_notifiers(self) -> list[dict[str, Any]]:
        """The ``alerts.onRejection`` references, as plain JSON to build notifiers from."""
        return _thawed(self.alerts.get("onRejection") or ())

    @property
    def gated(self) -> bool:
        """Whether the plan has tables to gate (the contract has gate settings)."""
        return self.tables is not None

    @property
    def limits(self) -> Limits:
        """The time budgets of its validation and of each contract query (``contract_gate_plan.limits``)."""
        return limits_of(self.gate)

    @property
    def column_labels(self) -> dict[str, str]:
        """The property name of each column whose ``physicalName`` differs from it."""
        return {column.name: column.label for column in self.columns if column.label}

    @property
    def classified_columns(self) -> frozenset[str]:
        return frozenset(column.name for column in self.columns if column.classified)

    def column(self, name: str) -> Column | None:
        return next((column for column in self.columns if column.name == name), None)

    def candidate(self, submission_id: str) -> Address:
        """Where stage freezes a file landing of ``submission_id`` (resolved, as every table here)."""
        schema = self.require_tables().candidate_schema
        if schema is None:
            raise PlanError("the plan has no candidate schema: stage has nowhere to freeze a file landing")
        return candidate_address(schema, self.object, submission_id)

    def require_freshness(self) -> Freshness:
        """The freshness SLA, for the freshness check; a plan without one has nothing to check."""
        if self.freshness is None:
            raise PlanError("the plan has no freshness: the contract states no freshness or latency SLA")
        return self.freshness

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


def compiled_plan(document: dict[str, Any]) -> Plan:
    """The typed plan of a document the compiler has just built, its SQL checked as it was
    written and its fingerprint computed: typed without the second check :func:`load_plan` makes."""
    return _typed(document)


def _typed(document: dict[str, Any]) -> Plan:
    contract = document["contract"]
    json_text = {column for rule in document["rules"] if rule["kind"] == "json"
                 for column in rule.get("columns") or ()}
    freshness = document.get("freshness")
    access = document.get("access")
    names = document.get("names") or gate_names(str(contract["id"]), document["object"], 1, document.get("environment"))
    return Plan(
        fingerprint=document["fingerprint"],
        contract_id=str(contract["id"]),
        contract_version=str(contract["version"]),
        object=document["object"],
        environment=document.get("environment"),
        names=Names(**names),
        contract_name=contract.get("name"),
        contract_domain=contract.get("domain"),
        columns=tuple(_column(column, json_text) for column in document["columns"]),
        key=tuple(document["key"]),
        rules=tuple(_rule(rule) for rule in document["rules"]),
        schema_policy=document["schema_policy"],
        delta_column_mapping=bool(document.get("delta_column_mapping")),
        freshness=Freshness(freshness["column"], freshness["column_type"], int(freshness["max_age_seconds"]),
                            freshness.get("property", "freshness"), freshness.get("value"), freshness.get("unit"))
        if freshness else None,
        tables=_tables(document.get("tables")),
        gate=_frozen(document.get("gate") or {}),
        access=Access(tuple(access.get("consumers") or ()), tuple(access.get("owners") or ())) if access else None,
        document=document,
    )


def _column(column: dict[str, Any], json_text: set[str]) -> Column:
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
        json_text=column["name"] in json_text,
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
        reference=_reference(rule.get("reference")),
        history=history_of(rule["history"]) if rule.get("history") is not None else None,
    )


def _reference(reference: dict[str, Any] | None) -> Reference | None:
    if reference is None:
        return None
    return Reference(contract=reference["contract"], object=reference["object"],
                     columns=tuple(reference["columns"]), table=Address.from_document(reference["table"]))


def _tables(tables: dict[str, Any] | None) -> Tables | None:
    if not tables:
        return None

    def resolved(name: str) -> Address | None:
        address = tables.get(name)
        return Address.from_document(address) if address else None

    return Tables(
        landing=resolved("landing"),
        candidate_schema=resolved("candidate_schema"),
        target=resolved("target"),
        quarantine=resolved("quarantine"),
        decisions=resolved("decisions"),
        references=MappingProxyType({alias: Address.from_document(address)
                                     for alias, address in sorted((tables.get("references") or {}).items())}),
    )


def _thawed(value: Any) -> Any:
    """Plain JSON data of a read-only view (``_frozen``), for code that may change or serialise it."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thawed(item) for item in value]
    return value


def _frozen(value: Any) -> Any:
    """A read-only deep view of JSON data: a step can read the plan but never change it."""
    if isinstance(value, dict):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value
