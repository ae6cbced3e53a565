"""Gate settings: the one ``customProperties`` entry (``property: contractGate``) that says what
ODCS has no word for. Unknown keys are errors, never silently dropped."""

from __future__ import annotations

import re
from typing import Annotated, Literal

import pydantic as pyd
from pydantic.alias_generators import to_camel

from contract_gate import config
from contract_gate.contract.notifiers import notifier_problems
from contract_gate.contract.schedules import schedule_problem
from contract_gate_plan.limits import DEFAULT_QUERY_SECONDS, DEFAULT_VALIDATION_SECONDS
from contract_gate_plan.reader_options import option_problems
from contract_gate_plan.reserved import CANDIDATE_SCHEMA

GATE_PROPERTY = "contractGate"
_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# ``@landing``: a run starts within a few seconds of a complete batch.
DEFAULT_SETTLE_SECONDS = 5
DEFAULT_POLL_SECONDS = 2
_MARKER = re.compile(r"_[A-Za-z0-9_.-]{0,63}|\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,62}")


_CONNECTION_ID = r"^[A-Za-z0-9_.-]{1,250}$"  # what Airflow takes as a connection id


class _Model(pyd.BaseModel):
    model_config = pyd.ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class TableRef(_Model):
    """A table by name (resolved against the server's catalog/schema or root path) or a path."""

    table: str | None = pyd.Field(default=None, min_length=1)
    path: str | None = pyd.Field(default=None, min_length=1)
    format: Literal["delta", "parquet", "csv", "json"] = "delta"
    options: dict[str, str] = {}
    # The Airflow connection of an object-storage path (s3://, abfss://, gs://): its credentials
    # reach the store through airflow.sdk.ObjectStoragePath; of a catalog table, the Databricks
    # connection whose SQL warehouse tells its version. In the table's plan address only.
    connection: str | None = pyd.Field(default=None, pattern=_CONNECTION_ID, exclude=True)

    @pyd.field_validator("options")
    @classmethod
    def _reader_options(cls, options: dict[str, str], info: pyd.ValidationInfo) -> dict[str, str]:
        """Spark copies reader options into Hadoop's configuration: parsing options only
        (:mod:`contract_gate_plan.reader_options`)."""
        problems = option_problems(info.data["format"], options) if "format" in info.data else []
        if problems:
            raise ValueError("; ".join(problems))
        return options

    @pyd.model_validator(mode="after")
    def _one_address(self):
        if (self.table is None) == (self.path is None):
            raise ValueError("give exactly one of 'table' or 'path'")
        if self.connection is not None and self.table is None and "://" not in self.path:
            raise ValueError("'connection' applies to an object-storage path (s3://, abfss://, gs://...) or a "
                             "catalog table")
        return self


class CandidateSettings(_Model):
    """Where candidates are frozen: a restricted schema (or folder) only the gate can read."""

    schema_: str = pyd.Field(default=CANDIDATE_SCHEMA, alias="schema", min_length=1)


class PublicationSettings(_Model):
    mode: Literal["append", "replace_keys"] = "append"


class ViolationSettings(_Model):
    policy: Literal["reject_batch", "split_rows"] = "reject_batch"
    # With split_rows: above this share of invalid rows the whole batch is rejected.
    max_invalid_share: float | None = pyd.Field(default=None, ge=0, le=1)

    @pyd.model_validator(mode="after")
    def _share_needs_split(self):
        if self.max_invalid_share is not None and self.policy != "split_rows":
            raise ValueError("maxInvalidShare only applies to policy 'split_rows'")
        return self


class ExecutionSettings(_Model):
    mode: Literal["local", "spark_submit", "spark_connect", "databricks"] = "local"
    connection_id: str | None = pyd.Field(default=None, pattern=_CONNECTION_ID)


class NotifierRef(_Model):
    """An Airflow ``BaseNotifier`` the deployment allows contracts to name (``class``: its dotted
    path), with the arguments and template text it allows (:mod:`contract_gate.contract.notifiers`)."""

    class_: str = pyd.Field(alias="class", pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
    arguments: dict[str, object] = {}

    @pyd.model_validator(mode="after")
    def _allowed(self):
        problems = notifier_problems({"class": self.class_, "arguments": self.arguments})
        if problems:
            raise ValueError("; ".join(f"{'.'.join(map(str, where))}: {message}" for where, message in problems))
        return self


class AlertSettings(_Model):
    notifiers: list[NotifierRef] = []
    freshness_schedule: str = "@hourly"
    decision_deadline_minutes: int | None = pyd.Field(default=None, ge=1)
    # Told once per quarantined, split or failed submission, after its decision is recorded.
    on_rejection: list[NotifierRef] = []
    # Off by default: a rejection is the gate working. On, the run turns red for an on-call team.
    fail_run_on_rejection: bool = False

    @pyd.field_validator("freshness_schedule")
    @classmethod
    def _freshness_schedule(cls, schedule: str) -> str:
        problem = schedule_problem(schedule)
        if problem:
            raise ValueError(problem)
        return schedule


class LandingWatch(_Model):
    """``schedule: {onLanding: ...}``: start the gate when a new batch has landed (Airflow's
    event-driven scheduling; :mod:`contract_gate.triggers.landing`). A file landing has landed
    when ``marker`` exists in its folder, or, without a marker, when nothing in the folder has
    changed for ``settleSeconds``; a Delta landing when it has a version not gated yet."""

    # A file name in the landing folder, never a path: the gate only looks inside its landing. It
    # starts with '_' or '.', names that Spark and the batch identity skip, so it is never read as data.
    marker: str | None = None
    # Seconds, not minutes, from a complete batch to its run: a producer that writes slowly
    # (or copies with preserved times) writes a marker instead of relying on the settle.
    settle_seconds: int = pyd.Field(default=DEFAULT_SETTLE_SECONDS, ge=0, le=86400)
    # The triggerer polls every landing this often; a lower bound keeps a contract from
    # turning the shared triggerer into a busy loop.
    poll_seconds: int = pyd.Field(default=DEFAULT_POLL_SECONDS, ge=2, le=3600)


    @pyd.field_validator("marker")
    @classmethod
    def _file_name(cls, marker: str | None) -> str | None:
        if marker is not None and not _MARKER.fullmatch(marker):
            raise ValueError(f"marker {marker!r} must be a file name in the landing folder that starts with '_' or "
                             "'.' (e.g. _SUCCESS; letters, digits, '_', '.', '-'), not a path")
        return marker


class LandingSchedule(_Model):
    on_landing: LandingWatch


# A cron expression or preset, or a LandingSchedule; tagged so an error names only the form given.
Schedule = Annotated[
    Annotated[str, pyd.Tag("union-cron")] | Annotated[LandingSchedule, pyd.Tag("union-landing")],
    pyd.Discriminator(lambda value: "union-cron" if isinstance(value, str) else "union-landing"),
]


class RetrySettings(_Model):
    """How a gate recovers from a fault without a person (``contract_gate.contract.retry_policy``): each task
    is retried ``tasks`` times, ``delaySeconds`` apart, and a batch whose run still ended without
    a final decision is gated again, up to ``runsPerBatch`` runs. Publication is exactly-once
    whatever the count (``txnAppId``/``txnVersion``, recovery from tagged commits).
    Unset keys: the deployment's ``[contract_gate]`` options, else the built-in defaults."""

    tasks: int | None = pyd.Field(default=None, ge=0, le=10)
    delay_seconds: int | None = pyd.Field(default=None, ge=0, le=3600)
    runs_per_batch: int | None = pyd.Field(default=None, ge=1, le=20)


class RetentionSettings(_Model):
    candidate_days: int = pyd.Field(default=7, ge=1)
    quarantine_days: int = pyd.Field(default=90, ge=1)


# The deployment's ceilings of the time budgets a contract may ask for, and what holds without one.
CEILING_OPTIONS = {"validation_seconds": "max_validation_seconds", "query_seconds": "max_query_seconds"}
DEFAULT_CEILINGS = {"validation_seconds": 4 * DEFAULT_VALIDATION_SECONDS, "query_seconds": 6 * DEFAULT_QUERY_SECONDS}


def deployment_ceiling(limit: str) -> tuple[int, str]:
    """(the ceiling of ``limit``, where it was set): the deployment's, else the built-in one."""
    variable = config.describe(CEILING_OPTIONS[limit])
    configured = config.get(CEILING_OPTIONS[limit])
    if not configured:
        return DEFAULT_CEILINGS[limit], f"built in; {variable} sets the deployment's own"
    if not configured.isdigit() or int(configured) < 1:
        raise ValueError(f"{variable}={configured!r} must be a whole number of seconds above 0")
    return int(configured), variable


def _capped_default(limit: str, default: int):
    return lambda: min(default, deployment_ceiling(limit)[0])


class LimitsSettings(_Model):
    """Time budgets, enforced inside Spark: the whole validation, and each ``type: sql`` query.
    A contract may lower them, and raise them up to the deployment's ceiling; a default above
    that ceiling becomes the ceiling."""

    validation_seconds: int = pyd.Field(default_factory=_capped_default("validation_seconds",
                                                                        DEFAULT_VALIDATION_SECONDS), ge=1)
    query_seconds: int = pyd.Field(default_factory=_capped_default("query_seconds", DEFAULT_QUERY_SECONDS), ge=1)

    @pyd.field_validator("validation_seconds", "query_seconds")
    @classmethod
    def _under_ceiling(cls, seconds: int, info: pyd.ValidationInfo) -> int:
        if info.field_name is None:  # pydantic names the field a field validator runs for
            raise TypeError("_under_ceiling runs as a field validator only")
        ceiling, source = deployment_ceiling(info.field_name)
        if seconds > ceiling:
            raise ValueError(f"{seconds} s is above the deployment's ceiling of {ceiling} s ({source})")
        return seconds


class EvolutionSettings(_Model):
    """How the target follows a new contract version (``contract_gate_plan.migration``): ``auto``
    migrates a target whose differences from the plan are non-breaking in the publish step,
    ``manual`` refuses to publish and prints the statements for someone to review and run.

    A breaking difference is refused unless the contract's major version went up and
    ``breaking`` says what to do: ``newTarget`` publishes every major version from 2 on to a table
    of its own (``<target>_v<major>``, quarantine likewise; the old one stays for its consumers),
    ``allow`` changes the table in place where Delta can, naming ``consumers`` it breaks in the
    migration's decision."""

    apply: Literal["auto", "manual"] = "auto"
    breaking: Literal["refuse", "newTarget", "allow"] = "refuse"
    consumers: list[Annotated[str, pyd.StringConstraints(min_length=1, max_length=200)]] = \
        pyd.Field(default_factory=list, max_length=100)

    @pyd.model_validator(mode="after")
    def _consumers_named(self):
        if self.breaking == "allow" and not self.consumers:
            raise ValueError("breaking: allow needs the consumers it breaks, by name (consumers: [...])")
        if self.consumers and self.breaking != "allow":
            raise ValueError("consumers are named for breaking: allow only")
        return self


class GateSettings(_Model):
    landing: TableRef
    target: TableRef | None = None
    quarantine: TableRef | None = None
    decisions: TableRef | None = None
    candidate: CandidateSettings = CandidateSettings()
    publication: PublicationSettings = PublicationSettings()
    violations: ViolationSettings = ViolationSettings()
    schema_policy: Literal["strict", "additive"] = "strict"
    # A cron expression or preset, or "@landing" / {onLanding: {...}}: start when a batch lands.
    schedule: Schedule | None = None
    execution: ExecutionSettings = ExecutionSettings()
    alerts: AlertSettings = AlertSettings()
    retention: RetentionSettings = RetentionSettings()
    # Orchestration, not validation: left out of the plan's fingerprint when not given.
    retries: RetrySettings | None = None
    # "auto" or "manual" is short for {apply: ...}
    evolution: EvolutionSettings = EvolutionSettings()
    limits: LimitsSettings = pyd.Field(default_factory=LimitsSettings)
    # Tables a ``type: sql`` query may read besides its batch, by alias: ``{alias}`` in the query.
    # Their addresses are in the plan's ``tables.references`` (left out of its ``gate`` section).
    references: dict[str, TableRef] = pyd.Field(default_factory=dict, exclude=True)
    # A check the gate cannot run (another engine's, SQL in another dialect): refused, or listed as
    # not evaluated. Only the compiler reads it: the plan carries its rules, not the setting.
    unsupported_checks: Literal["refuse", "warn"] = pyd.Field(default="refuse", exclude=True)

    @pyd.model_serializer(mode="wrap")
    def _without_unset_retries(self, handler):
        """Plans of contracts that say nothing about retries stay as they were (same fingerprint)."""
        dumped = handler(self)
        if dumped.get("retries", False) is None:
            del dumped["retries"]
        return dumped

    @pyd.field_validator("evolution", mode="before")
    @classmethod
    def _evolution_shorthand(cls, evolution):
        return {"apply": evolution} if isinstance(evolution, str) else evolution

    @pyd.field_validator("schedule", mode="before")
    @classmethod
    def _landing_shorthand(cls, schedule):
        return {"onLanding": {}} if schedule == "@landing" else schedule

    @pyd.field_validator("schedule")
    @classmethod
    def _cron_schedule(cls, schedule):
        problem = schedule_problem(schedule, on_landing=True) if isinstance(schedule, str) else None
        if problem:
            raise ValueError(problem)
        return schedule

    @pyd.model_validator(mode="after")
    def _watchable_landing(self):
        """A path landing or a Delta table can be watched without Spark; a marker only means
        something in a folder."""
        if isinstance(self.schedule, LandingSchedule):
            if self.landing.path is None and self.landing.format != "delta":
                raise ValueError("schedule onLanding needs a landing given by path or a Delta table (a table in "
                                 "another format cannot be watched without Spark)")
            if self.landing.format == "delta" and self.schedule.on_landing.marker is not None:
                raise ValueError("schedule onLanding marker applies to file landings; a Delta landing has landed "
                                 "when it has a new version")
        return self

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
        parts = [p for p in error["loc"] if not (isinstance(p, str) and p.startswith(("function-after", "union-")))]
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = f"unknown gate setting {parts[-1]!r}"
        elif error["type"] == "missing":
            message = f"{parts[-1]} is required"
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        result.append((parts, message))
    return result
