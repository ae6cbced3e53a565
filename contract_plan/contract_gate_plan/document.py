"""The plan document (docs/plan-format.md): version, fingerprint, rendering, and the check that
refuses a plan the engine cannot execute faithfully.

The plan is the only contract the Spark side sees, so a plan that is malformed, from a newer
compiler, or edited after compilation must stop the job with a clear message instead of
being half-executed: an unknown rule kind silently skipped would let bad data through.

Plans travel through storage (DBFS, shared folders), so the Spark side trusts none of their
SQL: a plan file must carry the fingerprint of its content, and every SQL text in it (each
predicate, shortcut, filter and query, the compiler's and the contract's) must pass the same allow-list
as at compile time and be exactly its own rendering (``contract_gate_plan.sql_allowlist``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contract_gate_plan import batch_history, keys_across_batches, references
from contract_gate_plan.limits import check_limits
from contract_gate_plan.reader_options import option_problems
from contract_gate_plan.reserved import CANDIDATE_SCHEMA, reserved_problems
from contract_gate_plan.sql_allowlist import COLUMN_PLACEHOLDERS, TABLE_PLACEHOLDERS, SqlRefused, check_canonical

PLAN_VERSION = 1

SCOPE_OF_KIND = {
    **{
        kind: "row"
        for kind in (
            "required",
            "minimum",
            "maximum",
            "exclusive_minimum",
            "exclusive_maximum",
            "min_length",
            "max_length",
            "pattern",
            "enum",
            "not_blank",
            "json",
            "array_size",
            "unique_items",
            "custom_sql",
            "dqx",
            references.KIND,
        )
    },
    "metric": "dataset",
    "row_count": "dataset",
    "unique": "group",
    "sql": "query",
    "text": "text",
    "unsupported": "text",  # a check the gate cannot run, listed (not_evaluated) where the contract allows it
    keys_across_batches.KIND: keys_across_batches.SCOPE,
}

OPERATORS = (
    "mustBe",
    "mustNotBe",
    "mustBeGreaterThan",
    "mustBeGreaterOrEqualTo",
    "mustBeLessThan",
    "mustBeLessOrEqualTo",
    "mustBeBetween",
    "mustNotBeBetween",
)
RANGE_OPERATORS = ("mustBeBetween", "mustNotBeBetween")


class PlanError(ValueError):
    """The plan cannot be executed as written."""


def fingerprint(plan: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the plan without its ``fingerprint`` key."""
    body = {key: value for key, value in plan.items() if key != "fingerprint"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def render_plan(plan: dict[str, Any]) -> str:
    """The plan file's text: sorted keys, two-space indent, UTF-8, a trailing newline. The same
    contract and environment always give the same bytes (``tests/golden``)."""
    return json.dumps(plan, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_document(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    """Read (from a dict, a JSON file path or JSON text) and check a plan document; the typed
    plan the steps use is ``contract_gate_plan.model.load_plan``.

    A plan carrying a ``fingerprint`` must match it: a hand-edited plan is refused. A plan
    file must carry one; a plan dict without one (built in-process, in a notebook or a test)
    gets it computed, so reports always name one.
    """
    if isinstance(source, dict):
        plan = json.loads(json.dumps(source))  # a private copy, JSON-clean
    else:
        text = str(source)
        if isinstance(source, Path) or not text.lstrip().startswith("{"):
            text = Path(source).read_text(encoding="utf-8")
        try:
            plan = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PlanError(f"plan is not valid JSON: {exc}") from exc
        if not isinstance(plan, dict) or "fingerprint" not in plan:
            raise PlanError("plan file has no fingerprint: only a compiled plan is executed")
    check_document(plan)
    expected = fingerprint(plan)
    if plan.setdefault("fingerprint", expected) != expected:
        raise PlanError(
            f"plan fingerprint {plan['fingerprint']} does not match its content ({expected}):"
            " the plan was changed after it was compiled"
        )
    check_sql(plan)
    return plan


def check_document(plan: Any) -> None:
    """Raise ``PlanError`` naming the first thing in ``plan`` the engine cannot execute."""
    if not isinstance(plan, dict):
        raise PlanError("plan must be a JSON object")
    if plan.get("plan_version") != PLAN_VERSION:
        raise PlanError(
            f"plan_version {plan.get('plan_version')!r} is not supported (expected {PLAN_VERSION})"
        )
    for key in ("contract", "object", "columns", "key", "rules", "schema_policy"):
        if key not in plan:
            raise PlanError(f"plan has no {key!r}")
    contract = plan["contract"]
    if not isinstance(contract, dict) or "id" not in contract or "version" not in contract:
        raise PlanError("plan.contract must have 'id' and 'version'")
    if plan["schema_policy"] not in ("strict", "additive"):
        raise PlanError(f"plan.schema_policy {plan['schema_policy']!r} is not strict|additive")
    names = [_check_column(i, column) for i, column in enumerate(_list(plan, "columns"))]
    if len(set(names)) != len(names):
        raise PlanError("plan.columns has duplicate names")
    ids = [_check_rule(i, rule) for i, rule in enumerate(_list(plan, "rules"))]
    duplicates = sorted({rule_id for rule_id in ids if ids.count(rule_id) > 1})
    if duplicates:
        raise PlanError(f"plan.rules has duplicate ids: {', '.join(duplicates)}")
    _check_across_batches(plan)
    problem = check_limits(plan.get("gate"))
    if problem:
        raise PlanError(problem)
    _check_reserved(plan)
    _check_reader_options(plan)


def reference_aliases(plan: dict[str, Any]) -> list[str]:
    """The aliases of the tables a query may read besides its batch (gate ``references``)."""
    references = (plan.get("tables") or {}).get("references") or {}
    if not isinstance(references, dict):
        raise PlanError("plan.tables.references must be an object")
    return sorted(references)


def check_sql(plan: dict[str, Any]) -> None:
    """Refuse the plan unless every SQL text in it passes the allow-list and is its own rendering."""
    tables = [*TABLE_PLACEHOLDERS, *reference_aliases(plan)]
    for rule in plan["rules"]:
        texts: list[tuple[str, str, Sequence[str]]] = [
            (key, "expression", ()) for key in ("predicate", "passes_when", "filter") if rule.get(key) is not None]
        if rule["scope"] == "query":
            texts.append(("query", "query", [*tables, *(COLUMN_PLACEHOLDERS if rule["columns"] else ())]))
        for key, kind, placeholders in texts:
            try:
                check_canonical(rule[key], kind, placeholders)
            except SqlRefused as exc:
                raise PlanError(f"rule {rule['id']!r}.{key} is refused: {exc}") from None


def _list(container: dict[str, Any], key: str) -> list[Any]:
    value = container[key]
    if not isinstance(value, list):
        raise PlanError(f"{key} must be a list")
    return value


def _check_column(index: int, column: Any) -> str:
    where = f"plan.columns[{index}]"
    if not isinstance(column, dict):
        raise PlanError(f"{where} must be an object")
    for key in ("name", "type"):
        if not isinstance(column.get(key), str) or not column[key]:
            raise PlanError(f"{where}.{key} must be a non-empty string")
    label = column.get("label")
    if label is not None and (not _text(label) or label == column["name"]):
        raise PlanError(f"{where}.label must be the property's name where it differs from the column's")
    return column["name"]


def _check_rule(index: int, rule: Any) -> str:
    where = f"plan.rules[{index}]"
    if not isinstance(rule, dict):
        raise PlanError(f"{where} must be an object")
    if not isinstance(rule.get("id"), str) or not rule["id"]:
        raise PlanError(f"{where}.id must be a non-empty string")
    where = f"rule {rule['id']!r}"
    kind, scope = rule.get("kind"), rule.get("scope")
    if kind not in SCOPE_OF_KIND:
        raise PlanError(f"{where} has unknown kind {kind!r} (a newer compiler?)")
    # a metric with zero tolerance is a row rule (each counted row is invalid), else a batch verdict
    if scope != SCOPE_OF_KIND[kind] and not (kind == "metric" and scope == "row"):
        raise PlanError(f"{where}: kind {kind!r} must have scope {SCOPE_OF_KIND[kind]!r}")
    if rule.get("severity") not in ("error", "warning"):
        raise PlanError(f"{where}.severity must be error or warning")
    columns = rule.get("columns")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise PlanError(f"{where}.columns must be a list of column names")
    if (scope == "row" or kind == "metric") and not _text(rule.get("predicate")):
        raise PlanError(f"{where} needs a predicate")
    if scope in ("group", keys_across_batches.SCOPE) and not columns:
        raise PlanError(f"{where} needs the key columns")
    if scope == "query" and not _text(rule.get("query")):
        raise PlanError(f"{where} needs a query")
    for key in ("passes_when", "filter"):
        if rule.get(key) is not None and not _text(rule[key]):
            raise PlanError(f"{where}.{key} must be a non-empty string")
    if rule.get("passes_when") is not None and not _text(rule.get("predicate")):
        raise PlanError(f"{where}.passes_when needs a predicate it implies")
    if (kind == "unsupported") != _text(rule.get("reason")):
        raise PlanError(f"{where}: a reason is given with kind 'unsupported', and only there")
    if rule.get("threshold") is not None:
        _check_threshold(where, rule["threshold"])
    if (kind == references.KIND) != (rule.get("reference") is not None):
        raise PlanError(f"{where}: a reference is given with kind {references.KIND!r}, and only there")
    if kind == references.KIND:
        _check_reference(where, rule)
    if rule.get("history") is not None:
        _check_history(where, rule)
    return rule["id"]


def _check_history(where: str, rule: dict[str, Any]) -> None:
    """A history rule is a batch's row count or a column's null share, with bounds in range."""
    if rule["scope"] != "dataset" or (rule["kind"] == "metric" and rule.get("metric") != "nullValues"):
        raise PlanError(f"{where}: a history is given with a rowCount or nullValues rule over the batch, and only there")
    try:
        batch_history.history_of(rule["history"])
    except batch_history.HistoryError as exc:
        raise PlanError(f"{where}: {exc}") from None


def _check_reference(where: str, rule: dict[str, Any]) -> None:
    """A foreign key names a target table of the gate's (an address) and one referenced column
    per key column; its predicate is the one the compiler writes (it reads the flag column)."""
    reference = rule["reference"]
    if not isinstance(reference, dict) or not _text(reference.get("contract")) or not _text(reference.get("object")):
        raise PlanError(f"{where}.reference must name the referenced contract and object")
    columns = reference.get("columns")
    if not isinstance(columns, list) or len(columns) != len(rule["columns"]) or not all(map(_text, columns)):
        raise PlanError(f"{where}.reference.columns must name one referenced column per key column")
    if not isinstance(reference.get("table"), dict):
        raise PlanError(f"{where}.reference.table must be the referenced target's address")
    if rule.get("predicate") != references.predicate(rule["id"], rule["columns"]) or rule.get("filter"):
        raise PlanError(f"{where}: a reference's predicate is the compiler's own, without a filter")


def _check_reserved(plan: dict[str, Any]) -> None:
    """No step writes a target or quarantine, or stages a landing, where the gate keeps its own
    folders (``contract_gate_plan.reserved``): the compiler refuses such a contract, a plan is checked again."""
    tables = plan.get("tables") or {}
    schema = ((plan.get("gate") or {}).get("candidate") or {}).get("schema") or CANDIDATE_SCHEMA
    try:
        problems = reserved_problems(tables, schema)
    except (KeyError, TypeError, AttributeError, ValueError):
        raise PlanError("plan.tables must map roles to addresses ({kind: path, path} or {kind: table, name}) "
                        "and plan.gate.candidate.schema must be a name") from None
    if problems:
        raise PlanError(f"plan.tables: {problems[0][1]}")


def _check_reader_options(plan: dict[str, Any]) -> None:
    """Spark copies a reader's options into Hadoop's configuration: every table's are parsing
    options of its format (``contract_gate_plan.reader_options``), the compiler's check done again."""
    tables = plan.get("tables") or {}
    addresses = [(role, address) for role, address in tables.items() if role != "references"]
    addresses += [(f"references.{alias}", address) for alias, address in (tables.get("references") or {}).items()]
    for role, address in addresses:
        if not isinstance(address, dict) or not isinstance(address.get("options") or {}, dict):
            raise PlanError(f"plan.tables.{role} must be an address whose options are an object")
        problems = option_problems(address.get("format", "delta"), address.get("options") or {})
        if problems:
            raise PlanError(f"plan.tables.{role}: {problems[0]}")


def _check_across_batches(plan: dict[str, Any]) -> None:
    """A cross-batch key rule is measured against the target on the plan's business key, as the
    publish appends: on other columns, or beside another publication, it would judge a batch by
    what its publish does not do (quarantine a correction that ``replace_keys`` would apply)."""
    gate = plan.get("gate") or {}
    appends = (gate.get("publication") or {}).get("mode", "append") == "append"
    for rule in plan["rules"]:
        if rule["kind"] != keys_across_batches.KIND:
            continue
        where = f"rule {rule['id']!r}"
        if rule["columns"] != plan["key"]:
            raise PlanError(f"{where}: kind {rule['kind']!r} must have the plan's key as its columns")
        if not appends or not (plan.get("tables") or {}).get("target"):
            raise PlanError(f"{where}: kind {rule['kind']!r} needs gate settings that append to a target")
        extra = [key for key in ("predicate", "filter", "threshold") if rule.get(key) is not None]
        if extra:
            raise PlanError(f"{where}: kind {rule['kind']!r} takes no {extra[0]}")


def _check_threshold(where: str, threshold: Any) -> None:
    if not isinstance(threshold, dict) or threshold.get("operator") not in OPERATORS:
        raise PlanError(f"{where}.threshold.operator must be one of {', '.join(OPERATORS)}")
    value = threshold.get("value")
    if threshold["operator"] in RANGE_OPERATORS:
        valid = isinstance(value, list) and len(value) == 2 and all(map(_number, value))
    else:
        valid = _number(value)
    if not valid:
        raise PlanError(f"{where}.threshold.value does not fit {threshold['operator']}")
    if threshold.get("unit", "rows") not in ("rows", "percent"):
        raise PlanError(f"{where}.threshold.unit must be rows or percent")


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
