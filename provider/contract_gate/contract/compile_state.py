"""The state of one schema object's compile, shared by its parts (columns, rules, quality
checks, gate settings), and the rule list they add to: ids are settled once every rule is known."""

from __future__ import annotations

import re

from contract_gate.contract import rules
from contract_gate.contract.errors import ContractIssue, yaml_path
from contract_gate.contract.loader import LoadedContract
from contract_gate.contract.nested import FieldPath
from contract_gate.contract.physical_types import Mapped
from contract_gate.contract.settings import GateSettings
from contract_gate_plan import keys_across_batches, references
from contract_gate_plan.empty_batch import RULE_ID as EMPTY_BATCH_RULE_ID
from contract_gate_plan.sql_allowlist import has_lambda, is_deterministic

CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
# Rule ids of the Spark side's own checks of a landing (contract_gate_spark.validation.unparseable_values, contract_gate_plan.empty_batch),
# besides ``<column>.type``, and of the cross-batch key rule (in the plan only when the gate appends).
_GATE_RULE_IDS = ("record.parseable", EMPTY_BATCH_RULE_ID, keys_across_batches.RULE_ID)


def column_name(prop) -> str:
    """The column of a property in the data: its physicalName where given, else its name."""
    return prop.physicalName or prop.name


def near_miss(name, known) -> str | None:
    """The known name ``name`` was probably meant to be (``notblank``, ``not_blank``), or None."""
    if not isinstance(name, str) or name in known:
        return None
    folded = re.sub(r"[\W_]", "", name).lower()
    return next((k for k in known if k.lower() == folded), None)


def enforceable(rule: dict) -> bool:
    """Whether Delta can hold the rule as a CHECK constraint: an error on every row, deterministic,
    without a lambda (Delta's constraint parser cannot read ``->``), and on the row's own columns
    (a reference reads another table)."""
    return (rule["scope"] == "row" and rule["filter"] is None and rule["kind"] != references.KIND and rule["threshold"] is None
            and rule["severity"] == "error"
            and (rule["kind"] not in ("custom_sql", "dqx") or is_deterministic(rule["predicate"]))
            and not (rule["predicate"] and has_lambda(rule["predicate"])))


class CompileState:
    """What the parts of schema object ``index``'s compile read and add to: its issues, rules, columns and settings."""

    def __init__(self, loaded: LoadedContract, env: str | None, index: int = 0):
        self.loaded = loaded
        self.objects = loaded.model.schema_ or []  # compile_plans refuses a contract without one
        self.env = env
        self.index = index
        self.base = f"schema[{index}]"
        self.not_gated: str | None = None  # why this object is documentation only
        self.settings_sources: list[tuple[str, dict]] = []  # (YAML path, value) of its contractGate entries
        self.issues: list[ContractIssue] = []
        self.warnings: list[ContractIssue] = []  # what lint says of an accepted contract
        self.label_id_paths: set[str] = set()  # where a quality entry's ``name`` stands for its id
        self.rules: list[dict] = []
        self.columns: dict[str, str] = {}  # column (physicalName, else name) -> Spark type, contract order
        self.labels: dict[str, str] = {}  # column -> the property's name, where physicalName differs from it
        self.options: dict[str, dict] = {}  # column -> {option: (customProperties index, value)}
        self.key: list[str] = []
        self.settings: GateSettings | None = None
        self.server_type: str | None = None  # its dialect reads physicalType (physical_types)
        self.field_types: dict[str, tuple[str, str, Mapped | None]] = {}  # YAML path -> (Spark type, type's path, Mapped)
        self.field_names: set[str] = set()  # of nested fields (Delta needs column mapping for some)
        self.nested_fields: dict[str, tuple[FieldPath, str]] = {}  # dotted path -> (FieldPath, Spark type)

    # -- helpers -------------------------------------------------------------------------
    def error(self, path: str, message: str) -> None:
        self.issues.append(self.loaded.issue(path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(self.loaded.issue(path, message))

    def label(self, column: str) -> str:
        """The property name of a column: what rule ids and reports call it."""
        return self.labels.get(column, column)

    def id_prefix(self, column: str | None) -> str:
        """What a generated rule id starts with: the property name, or ``dataset`` for an object's rule."""
        return self.label(column) if column else "dataset"

    def rule_error(self, base: str, exc: rules.RuleError) -> None:
        self.error(yaml_path([base, *exc.keys()]), str(exc))

    def add_rule(self, source: str, rule_id: str, id_path: str | None = None, first: bool = False, **fields) -> None:
        """Queue a rule; ids are settled in :meth:`assign_ids` once every rule is known.
        ``id_path``: where the contract gave ``rule_id`` (None for a generated id); ``first``: this
        generated rule keeps its id even when another generated rule wants it."""
        rule = {"id": rule_id, "source": source, "severity": "error", "filter": None, "threshold": None,
                "predicate": None, "description": None, **fields}
        rule["enforceable"] = enforceable(rule)
        self.rules.append({"rule": rule, "id_path": id_path, "first": first})

    def assign_ids(self) -> list[dict]:
        """Contract-given ids must be unique and must not take a generated id (those are
        predictable, and a consumer may look them up). A quality entry's ``name`` is a label that
        stands for its id when it has none: it follows the same rules, except that entries may
        share it (or share an id's text), the later ones getting ``_2``, ``_3``... Generated ids
        that clash get ``_2``, ``_3``... in contract order, except ``key.unique`` (a column may be
        called ``key``)."""
        generated = {e["rule"]["id"]: e["rule"]["source"] for e in self.rules if e["id_path"] is None}
        reserved = {*_GATE_RULE_IDS, *(f"{name}.type" for name in self.columns)}
        named = [e for e in self.rules if e["id_path"] in self.label_id_paths]
        taken: dict[str, str] = {}
        for entry in self.rules:
            rule, id_path = entry["rule"], entry["id_path"]
            if id_path is None:
                continue
            if rule["id"] in taken and id_path not in self.label_id_paths:
                self.error(id_path, f"duplicate rule id {rule['id']!r}: also used by {taken[rule['id']]}")
            elif rule["id"] in generated:
                self.error(id_path, f"rule id {rule['id']!r} is the generated id of the rule from "
                                    f"{generated[rule['id']]}; choose another")
            elif rule["id"] in reserved:
                # the Spark side adds these for every landing; a contract rule must not stand in for one
                self.error(id_path, f"rule id {rule['id']!r} is reserved for the gate's own checks of "
                                    "the landed data; choose another")
            if id_path not in self.label_id_paths:
                taken[rule["id"]] = rule["source"]
        for rule in (e["rule"] for e in named):
            self._take_free_id(rule, taken)
        pending = sorted((e for e in self.rules if e["id_path"] is None), key=lambda e: not e["first"])
        for rule in (e["rule"] for e in pending):
            self._take_free_id(rule, taken)
        return [entry["rule"] for entry in self.rules]

    @staticmethod
    def _take_free_id(rule: dict, taken: dict[str, str]) -> None:
        """Give ``rule`` its wanted id, else the first free ``<id>_2``, ``<id>_3``..."""
        wanted, n = rule["id"], 2
        while rule["id"] in taken:
            rule["id"], n = f"{wanted}_{n}", n + 1
        taken[rule["id"]] = rule["source"]
