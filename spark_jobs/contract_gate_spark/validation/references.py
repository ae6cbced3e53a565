"""Foreign keys on the Spark side (``contract_gate_plan.references``): each ``references`` rule's
flag column, TRUE where the row's key is in the referenced target at a pinned Delta version.

The target is read at the version pinned when the batch is validated, which the report records
(``reference.version`` of the rule's entry); the split and the quarantine of that batch read the
same version from the report, so they mark exactly the rows the report counted. Only a table
whose properties name it the target of the referenced contract is read
(``contract_gate_plan.ownership``): a plan can point a reference at no other table.

The flag is a left join of the batch with the target's distinct keys, broadcast: the batch is
not shuffled, and a key found once flags each of its rows once (the keys are distinct).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_gate_plan import references
from contract_gate_plan.model import Plan, Rule
from contract_gate_plan.ownership import CONTRACT, ROLE, read_properties
from contract_gate_plan.sql_text import quote_identifier

_KEY = "__contract_gate_key{}"


@dataclass(frozen=True)
class Pinned:
    """A reference's target as read for one batch: its version (None: no table yet, so no key)."""

    rule: Rule
    version: int | None

    def as_report(self) -> dict[str, Any]:
        reference = self.rule.reference
        assert reference is not None  # a references rule always has one (the plan's check)
        return {"contract": reference.contract, "object": reference.object, "table": reference.table.location,
                "version": self.version}


def reference_rules(rules: Iterable[Rule]) -> list[Rule]:
    return [rule for rule in rules if rule.kind == references.KIND]


def pin(spark: SparkSession, rules: list[Rule]) -> tuple[dict[str, Pinned], dict[str, str]]:
    """(rule id -> its target's current version, rule id -> why it cannot be read)."""
    pinned: dict[str, Pinned] = {}
    problems: dict[str, str] = {}
    for rule in rules:
        reference = rule.reference
        assert reference is not None
        try:
            properties = read_properties(spark, reference.table)
        except AnalysisException:  # no table yet: the referenced object has published nothing
            pinned[rule.id] = Pinned(rule, None)
            continue
        if properties.get(ROLE) != "target" or properties.get(CONTRACT) != reference.contract:
            problems[rule.id] = (f"{reference.table.location} is not the published target of contract "
                                 f"{reference.contract!r}: a reference reads only a gate's target")
            continue
        latest = spark.sql(f"DESCRIBE HISTORY {reference.table.sql_name} LIMIT 1").first()
        pinned[rule.id] = Pinned(rule, int(latest["version"]) if latest is not None else None)
    return pinned, problems


def pinned_in_report(plan: Plan, report: Mapping[str, Any] | None) -> dict[str, Pinned]:
    """The versions a batch's report pinned, for the split and the quarantine of that batch."""
    rules = {rule.id: rule for rule in reference_rules(plan.rules)}
    pinned = {}
    for entry in (report or {}).get("rules", []):
        if entry["id"] in rules and isinstance(entry.get("reference"), Mapping):
            pinned[entry["id"]] = Pinned(rules[entry["id"]], entry["reference"].get("version"))
    return pinned


def with_found_flags(spark: SparkSession, df: DataFrame, pinned: Mapping[str, Pinned]) -> DataFrame:
    """``df`` with each pinned reference's flag column (TRUE: found; NULL: absent). A column of
    that name in the batch is dropped first: the name is the gate's, a batch cannot vouch for its keys."""
    for rule_id, one in pinned.items():
        reference = one.rule.reference
        assert reference is not None
        flag = references.flag_column(rule_id)
        df = df.drop(flag)
        names = [_KEY.format(i) for i in range(len(reference.columns))]
        if one.version is None:
            df = df.withColumn(flag, F.lit(None).cast("boolean"))
            continue
        target = reference.table.read(spark.read.format("delta").option("versionAsOf", one.version))
        keys = target.select(*[F.col(quote_identifier(c)).alias(n) for c, n in zip(reference.columns, names)])
        keys = keys.where(reduce(lambda a, b: a & b, [F.col(n).isNotNull() for n in names])).distinct()
        condition = reduce(lambda a, b: a & b, [F.col(quote_identifier(c)) == F.col(n)
                                                for c, n in zip(one.rule.columns, names)])
        df = df.join(F.broadcast(keys.withColumn(flag, F.lit(True))), condition, "left").drop(*names)
    return df
