"""Gate settings: the one ``customProperties`` entry (``property: contractGate``) that says what
ODCS has no word for. Unknown keys are errors, never silently dropped."""

from __future__ import annotations

import re
from typing import Literal

import pydantic as pyd
from pydantic.alias_generators import to_camel

GATE_PROPERTY = "contractGate"
_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class _Model(pyd.BaseModel):
    model_config = pyd.ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class TableRef(_Model):
    """A table by name (resolved against the server's catalog/schema or root path) or a path."""

    table: str | None = None
    path: str | None = None
    format: Literal["delta", "parquet", "csv", "json"] = "delta"
    options: dict[str, str] = {}

    @pyd.model_validator(mode="after")
    def _one_address(self):
        if (self.table is None) == (self.path is None):
            raise ValueError("give exactly one of 'table' or 'path'")
        return self


class CandidateSettings(_Model):
    """Where candidates are frozen: a restricted schema (or folder) only the gate can read."""

    schema_: str = pyd.Field("_contract_gate_candidates", alias="schema")


class PublicationSettings(_Model):
    mode: Literal["append", "replace_keys"] = "append"


class ViolationSettings(_Model):
    policy: Literal["reject_batch", "split_rows"] = "reject_batch"
    # With split_rows: above this share of invalid rows the whole batch is rejected.
    max_invalid_share: float | None = pyd.Field(None, ge=0, le=1)

    @pyd.model_validator(mode="after")
    def _share_needs_split(self):
        if self.max_invalid_share is not None and self.policy != "split_rows":
            raise ValueError("maxInvalidShare only applies to policy 'split_rows'")
        return self


class ExecutionSettings(_Model):
    mode: Literal["local", "spark_submit", "spark_connect", "databricks"] = "local"
    connection_id: str | None = None


class NotifierRef(_Model):
    """Any importable Airflow ``BaseNotifier``: ``class`` is its dotted path."""

    class_: str = pyd.Field(alias="class", pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
    arguments: dict[str, object] = {}


class AlertSettings(_Model):
    notifiers: list[NotifierRef] = []
    freshness_schedule: str = "@hourly"
    decision_deadline_minutes: int | None = pyd.Field(None, ge=1)


class RetentionSettings(_Model):
    candidate_days: int = pyd.Field(7, ge=1)
    quarantine_days: int = pyd.Field(90, ge=1)


class GateSettings(_Model):
    landing: TableRef
    target: TableRef | None = None
    quarantine: TableRef | None = None
    decisions: TableRef | None = None
    candidate: CandidateSettings = CandidateSettings()
    publication: PublicationSettings = PublicationSettings()
    violations: ViolationSettings = ViolationSettings()
    schema_policy: Literal["strict", "additive"] = "strict"
    schedule: str | None = None
    execution: ExecutionSettings = ExecutionSettings()
    alerts: AlertSettings = AlertSettings()
    retention: RetentionSettings = RetentionSettings()
    # Tables a ``type: sql`` query may read besides its batch, by alias: ``{alias}`` in the query.
    # Their addresses are in the plan's ``tables.references`` (left out of its ``gate`` section).
    references: dict[str, TableRef] = pyd.Field(default_factory=dict, exclude=True)

    @pyd.field_validator("references")
    @classmethod
    def _lakehouse_tables(cls, references: dict) -> dict:
        """A reference is a Delta table of the lakehouse, by name: never a path or a file."""
        for alias, ref in references.items():
            if not _ALIAS.fullmatch(alias) or alias in ("object", "property"):
                raise ValueError(f"reference alias {alias!r} must be a plain identifier "
                                 "([A-Za-z_][A-Za-z0-9_]*) other than object and property")
            if ref.table is None or ref.format != "delta" or ref.options \
                    or not all(_ALIAS.fullmatch(part) for part in ref.table.split(".")):
                raise ValueError(f"reference {alias!r} must be a Delta table given by name "
                                 "(table: name or schema.name, plain identifiers; no path, format or options)")
        return references


def settings_errors(exc: pyd.ValidationError) -> list[tuple[list, str]]:
    """(path parts relative to the settings value, message) for each pydantic error."""
    result = []
    for error in exc.errors():
        parts = [p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-after"))]
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = f"unknown gate setting {parts[-1]!r}"
        elif error["type"] == "missing":
            message = f"{parts[-1]} is required"
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        result.append((parts, message))
    return result
