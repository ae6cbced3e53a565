"""Plan rules as Spark columns, and which rules can run on a given candidate.

Both the aggregate pass (``engine``) and the row diagnostics (``diagnostics``) build their
expressions here, so a row counted as failing in the report is exactly a row that carries the
rule id in ``_errors``/``_warnings``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DataType

from contract_gate_plan import keys_across_batches
from contract_gate_plan.empty_batch import empty_batch_rule
from contract_gate_plan.model import Plan, Rule
from contract_gate_plan.sql_text import quote_identifier
from contract_gate_plan.states import RuleStatus
from contract_gate_spark.validation.schema_compare import SchemaResult
from contract_gate_spark.validation.unparseable_values import parsed_records_only, type_rules


def column(name: str) -> Column:
    return F.col(quote_identifier(name))


def evaluated(rule: Rule) -> Column:
    """TRUE for the rows the rule judges: its ``filter`` (NULL counts as not selected)."""
    if rule.filter:
        return F.coalesce(F.expr(rule.filter), F.lit(False))
    return F.lit(True)


def failing(rule: Rule) -> Column:
    """TRUE for an evaluated row whose predicate is not TRUE: NULL is a failure. Never NULL.

    A rule's ``passes_when`` implies its predicate and costs less: the predicate is evaluated
    only on the rows it does not pass (Spark's OR does not evaluate its right side after TRUE)."""
    valid = F.coalesce(F.expr(rule.require_predicate()), F.lit(False))
    if rule.passes_when:
        valid = F.coalesce(F.expr(rule.passes_when), F.lit(False)) | valid
    return evaluated(rule) & ~valid


def keys_not_null(keys: tuple[str, ...]) -> Column:
    condition = F.lit(True)
    for name in keys:
        condition = condition & column(name).isNotNull()
    return condition


def key_set_id(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Rules on the same columns in any order share one group-by."""
    return tuple(sorted(keys))


@dataclass
class Triage:
    """Rules that will run, and why each of the others will not."""

    runnable: list[Rule] = field(default_factory=list)
    skipped: dict[str, tuple[RuleStatus, str]] = field(default_factory=dict)  # id -> (status, reason)
    considered: list[Rule] = field(default_factory=list)  # the plan's rules + the input's type rules

    def by_scope(self, *scopes: str) -> list[Rule]:
        return [rule for rule in self.runnable if rule.scope in scopes]


def triage(
    plan: Plan, df: DataFrame, schema: SchemaResult, depth: str, *, submission: bool = False,
    many_batches: bool = False,
) -> Triage:
    """Split the plan's rules (plus the type rules of a CSV/JSON candidate, ``contract_gate_spark.validation.unparseable_values``,
    and for a ``submission``, ``submission.not_empty``, ``contract_gate_plan.empty_batch``) into
    runnable ones and skipped ones with a reason. Over ``many_batches`` (a published target), a
    rule whose threshold counts rows is not executed: it bounds one batch, and batches that each
    met it can exceed it together.

    Runs no Spark action: expressions are only analysed, so a rule naming a missing column,
    or a predicate that does not parse or is not boolean, is reported ``not_evaluated``
    instead of failing the whole fused pass. ``type: sql`` queries are analysed when run.
    """
    rules = [*parsed_records_only(list(plan.rules), df.schema), *type_rules(plan, df.schema),
             *([empty_batch_rule()] if submission else [])]
    result = Triage(considered=rules)
    missing = set(schema.missing)
    mistyped = {m["column"] for m in schema.type_mismatches}
    candidates = []
    for rule in rules:
        reason = _static_reason(rule, missing, mistyped, depth, many_batches)
        if reason is None:
            candidates.append(rule)
        else:
            result.skipped[rule.id] = reason
    problems = _analysis_problems(df, candidates)
    for rule in candidates:
        if rule.id in problems:
            result.skipped[rule.id] = (RuleStatus.NOT_EVALUATED, problems[rule.id])
        else:
            result.runnable.append(rule)
    result.runnable.sort(key=rules.index)
    return result


def _static_reason(
    rule: Rule, missing: set[str], mistyped: set[str], depth: str, many_batches: bool
) -> tuple[RuleStatus, str] | None:
    if rule.kind == "unsupported":  # a check the gate cannot run, listed where the contract allows it
        return RuleStatus.NOT_EVALUATED, rule.reason or "the gate cannot run this check"
    if rule.scope == "text":
        return RuleStatus.NOT_EXECUTED, "text rules are documentation, not checks"
    if rule.scope == keys_across_batches.SCOPE:  # the batch alone cannot judge it; batch_keys fills it in
        return RuleStatus.NOT_EXECUTED, "judged against the target table by the gate's batch_keys step"
    if many_batches and rule.threshold is not None and rule.threshold.unit == "rows":
        return RuleStatus.NOT_EXECUTED, "its threshold counts the rows of one batch, not of the published table"
    if depth == "schema":
        return RuleStatus.NOT_EVALUATED, "depth=schema: only the schema was checked"
    for name in rule.columns:
        if name in missing:
            return RuleStatus.NOT_EVALUATED, f"column {name} is missing"
        if name in mistyped:
            return RuleStatus.NOT_EVALUATED, f"column {name} has the wrong type"
    return None


def _expressions(rule: Rule) -> list[tuple[str, bool]]:
    """(SQL text, must be boolean) for everything of the rule the engine will evaluate."""
    expressions = [(text, True) for text in (rule.predicate, rule.passes_when, rule.filter) if text]
    if rule.scope == "group":
        expressions += [(quote_identifier(name), False) for name in rule.columns]
    return expressions


def _analysis_problems(df: DataFrame, rules: list[Rule]) -> dict[str, str]:
    """{rule id: problem} for rules whose expressions do not analyse on ``df``.

    All expressions are analysed in one projection (one round of analysis, however many
    rules); only when that fails is each analysed alone, to name the culprits.
    """
    pairs = [(rule, text, boolean) for rule in rules for text, boolean in _expressions(rule)]
    types: list[DataType | str]
    try:
        types = [f.dataType for f in df.select(*[F.expr(text) for _, text, _ in pairs]).schema.fields]
    except AnalysisException:
        types = [_type_or_error(df, text) for _, text, _ in pairs]
    problems: dict[str, str] = {}
    for (rule, text, boolean), data_type in zip(pairs, types):
        if rule.id in problems:
            continue
        if isinstance(data_type, str):
            problems[rule.id] = f"cannot analyse {text!r}: {data_type}"
        elif boolean and not isinstance(data_type, BooleanType):
            problems[rule.id] = f"{text!r} is {data_type.simpleString()}, not boolean"
    return problems


def _type_or_error(df: DataFrame, text: str) -> DataType | str:
    try:
        return df.select(F.expr(text)).schema.fields[0].dataType
    except AnalysisException as exc:
        return str(exc).splitlines()[0]
