"""The aggregate passes over a candidate: its rows grouped on a key set (on the key's hash where
its types allow) for the key set's uniqueness rules, each group carrying the spans of its rows'
flag words so the row rules are counted in the same pass; without a key set, the rows grouped on
their flag words."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from contract_gate_plan.model import Rule
from contract_gate_spark.validation import flag_words
from contract_gate_spark.validation import key_hash as key_hashing
from contract_gate_spark.validation.flag_words import FlagWords
from contract_gate_spark.validation.key_hash import hashable, key_hash, merged_keys
from contract_gate_spark.validation.report import Measurement
from contract_gate_spark.validation.rule_columns import column, evaluated, key_set_id, keys_not_null

FLAG = "__contract_gate_{}"  # reserved names of the columns the passes add
HASH = FLAG.format("key_hash")
COMPLETE = FLAG.format("key_complete")
SIZE_CLASS = FLAG.format("size_class")
GROUP_HASH = FLAG.format("group_hash")
SUSPECT = FLAG.format("suspect")


def rules_by_key_set(group_rules: list[Rule]) -> dict[tuple[str, ...], list[Rule]]:
    """The uniqueness rules grouped by their key set, in the plan's order."""
    key_sets: dict[tuple[str, ...], list[Rule]] = {}
    for rule in group_rules:
        key_sets.setdefault(key_set_id(rule.columns), []).append(rule)
    return key_sets


def key_set_pass(
    df: DataFrame,
    rules: list[Rule],
    measurements: dict[str, Measurement],
    *,
    words: FlagWords | None = None,
    fold: bool = False,
) -> tuple[dict[str, int], int | None]:
    """One group-by on a key set for all its uniqueness rules, with ``words`` counted in the
    same aggregate; returns (the flag counts and rows, invalid rows).

    A row fails a uniqueness rule when its group holds 2+ evaluated rows: every row of the group
    counts. With ``fold``, also counts the invalid rows of the whole candidate: a group with an
    error-level duplicate is invalid entire, any other group contributes its broken rows.
    Without it, invalid rows are ``None``.

    Groups on the key's hash (``key_hash``) where the key's types allow. When hash groups of
    2+ rows exist, a look at those groups' key columns follows (``merged_keys``); when one of
    them merged distinct keys, or there are too many to name, counts the key set again grouped
    on its columns (the flag counts come from the first pass).
    """
    keys = rules[0].columns
    hashed = hashable(df.schema, keys)
    counts, key_result = _aggregate(df, words, rules, fold=fold, hashed=hashed)
    suspects = key_result.get("suspects")
    if suspects and merged_keys(df, keys, suspects):
        key_result = _key_totals_on_columns(df, words, rules, fold=fold)
    for index, rule in enumerate(rules):
        measurements[rule.id] = Measurement(
            failed_rows=key_result[f"failed{index}"] or 0,
            evaluated_rows=key_result[f"evaluated{index}"] or 0,
            duplicate_groups=key_result[f"groups{index}"] or 0,
        )
    invalid = (key_result["invalid"] or 0) if fold else None
    return {**counts, "rows": key_result["rows"] or 0}, invalid


def _aggregate(
    df: DataFrame,
    words: FlagWords | None,
    key_rules: list[Rule],
    *,
    fold: bool,
    hashed: bool,
) -> tuple[dict[str, int], dict[str, Any]]:
    """One aggregate over ``df``: its rows grouped on the key set of ``key_rules``; returns (the
    flag counts and rows, the key set's totals).

    Each key group carries its size and its words' spans (``FlagWords.spans``); the groups are
    aggregated once more on their spans, size class and, for a hash group of 2+ rows, its hash
    (a suspect for ``merged_keys``), and the driver adds those few rows up.
    """
    summary = key_groups(df, words, key_rules, fold=fold, hashed=hashed)
    limit = key_hashing.LOOK_LIMIT + flag_words.FLAG_SETS + 1
    rows = _first_rows(summary, limit + 1)
    if len(rows) > limit:  # more suspects or spans than the driver reads: count on the columns
        key_result = _key_totals_on_columns(df, words, key_rules, fold=fold)
        return (_flag_totals(df, words) if words else {}), key_result
    # by position: the summary holds a row per suspect, and a Row looks a name up in a list
    position = {name: index for index, name in enumerate(summary.columns)}
    labels = {SIZE_CLASS, SUSPECT, *(words.all_names + words.any_names if words else [])}
    key_result = {
        name: sum(row[index] or 0 for row in rows)
        for name, index in position.items() if name not in labels
    }
    suspect = position[SUSPECT]
    key_result["suspects"] = [row[suspect] for row in rows if row[suspect] is not None]
    if words is None:
        return {}, key_result
    spans: dict[tuple[Any, ...], list[int]] = {}  # suspects that share a span are read as one
    shared = [position[name] for name in words.all_names]
    raised = [position[name] for name in words.any_names]
    size_class, rows_at, groups_at = position[SIZE_CLASS], position["rows"], position["groups"]
    for row in rows:
        span = (tuple(row[i] for i in shared), tuple(row[i] for i in raised), row[size_class])
        sizes = spans.setdefault(span, [0, 0])
        sizes[0] += row[rows_at]
        sizes[1] += row[groups_at]
    counts = words.read([(*span, in_span, groups) for span, (in_span, groups) in spans.items()])
    return (counts if counts is not None else _flag_totals(df, words)), key_result

def key_groups(
    df: DataFrame,
    words: FlagWords | None,
    key_rules: list[Rule],
    *,
    fold: bool,
    hashed: bool,
    spans: bool = True,
) -> DataFrame:
    """The rows grouped on the key set (its hash, or its columns), then the groups grouped on
    their spans, size class and suspect hash, each such row with the key set's totals over its
    groups; without ``spans``, one row of the key set's totals.

    A hash group is mostly one row, so aggregating before the shuffle would keep a map entry
    per row and save nothing: the rows are shuffled on the hash first, sorted on it, and
    grouped in that order.
    """
    keys = key_rules[0].columns
    if hashed:
        key_columns, per_row = [HASH], [key_hash(keys).alias(HASH)]
    else:
        key_columns = [FLAG.format(f"key{n}") for n in range(len(keys))]
        per_row = [column(k).alias(name) for k, name in zip(keys, key_columns)]
    group_aggregates = [F.count(F.lit(1)).alias("size")]
    for index, rule in enumerate(key_rules):
        if rule.filter:  # unfiltered rules share "size"
            selected = FLAG.format(f"selected{index}")
            per_row.append(evaluated(rule).alias(selected))
            group_aggregates.append(F.count_if(selected).alias(f"size{index}"))
    if _nulls_distinct(key_rules):
        per_row.append(keys_not_null(keys).alias(COMPLETE))
        group_aggregates.append(F.count_if(COMPLETE).alias("complete"))
    if words is not None:
        per_row += words.columns()
        if fold:
            group_aggregates.append(F.count_if(words.broken()).alias("broken"))
        if spans:
            group_aggregates += words.spans()
    rows = df.select(*per_row)
    if hashed:
        # Sorted after the shuffle, the rows are grouped in one streaming sort aggregate
        # (``pass_settings``). first(hash) is the group's own hash; as an order-dependent
        # aggregate it keeps Spark's optimizer from dropping the sort below the group-by.
        rows = rows.repartition(HASH).sortWithinPartitions(HASH)
        group_aggregates.append(F.first(HASH).alias(GROUP_HASH))
    groups = rows.groupBy(*key_columns).agg(*group_aggregates)
    totals = [F.sum("size").alias("rows"), F.count(F.lit(1)).alias("groups")]
    totals += _group_totals(key_rules, fold, F.col("complete") > 0)
    if not spans:
        return groups.agg(*totals)  # one row: the key set's totals
    span_names = words.all_names + words.any_names if words is not None else []
    suspect = F.col("size") > 1
    if all(rule.nulls_distinct for rule in key_rules):  # a group of keys with NULL parts is no duplicate
        suspect = suspect & (F.col("complete") > 0)
    labelled = groups.select(
        "*",
        F.least(F.col("size"), F.lit(3)).alias(SIZE_CLASS),
        (F.when(suspect, F.col(GROUP_HASH)) if hashed else F.lit(None).cast("long")).alias(SUSPECT),
    )
    return labelled.groupBy(*span_names, SIZE_CLASS, SUSPECT).agg(*totals)


def _key_totals_on_columns(
    df: DataFrame, words: FlagWords | None, key_rules: list[Rule], *, fold: bool
) -> dict[str, Any]:
    """The key set's totals with the rows grouped on its columns: exact whatever the hashes."""
    totals = key_groups(df, words if fold else None, key_rules, fold=fold, hashed=False, spans=False)
    return totals.collect()[0].asDict()


def flag_counts(df: DataFrame, words: FlagWords) -> dict[str, int]:
    """The flag counts of a batch without a key set: its rows grouped on their words."""
    per_words = df.select(*words.columns()).groupBy(*words.names).agg(F.count(F.lit(1)).alias("rows"))
    rows = _first_rows(per_words, flag_words.FLAG_SETS + 1)
    if len(rows) > flag_words.FLAG_SETS:  # a batch crafted to raise that many sets of flags
        return _flag_totals(df, words)
    exact = [tuple(row[name] for name in words.names) for row in rows]
    counts = words.read([(w, w, 1, row["rows"], row["rows"]) for w, row in zip(exact, rows)])
    assert counts is not None  # a group of one row is exact: it raises all its bits and only those
    return counts


def _first_rows(df: DataFrame, count: int) -> list[Row]:
    """Up to ``count`` rows in one job: ordered, the limit is a top-k per partition, where a
    plain ``limit`` reads partitions in rounds, one job each."""
    return df.orderBy(df.columns[0]).limit(count).collect()


def _flag_totals(df: DataFrame, words: FlagWords) -> dict[str, int]:
    """The flag counts one aggregate function each: one more aggregate over the batch."""
    return df.select(*words.columns()).agg(*words.totals()).collect()[0].asDict()


def _nulls_distinct(rules: list[Rule]) -> bool:
    return any(rule.nulls_distinct for rule in rules)


def _group_totals(rules: list[Rule], fold: bool, key_complete: Column) -> list[Column]:
    """Over the groups: failing and evaluated rows and duplicate groups per rule, and with
    ``fold`` the invalid rows. ``key_complete``: the group's key has no NULL part."""
    duplicate = {}
    totals = []
    for index, rule in enumerate(rules):
        size = F.col(f"size{index}" if rule.filter else "size")
        duplicate[index] = size > 1
        if rule.nulls_distinct:
            duplicate[index] = duplicate[index] & key_complete
        totals += [
            F.sum(F.when(duplicate[index], size).otherwise(0)).alias(f"failed{index}"),
            F.sum(size).alias(f"evaluated{index}"),
            F.count_if(duplicate[index]).alias(f"groups{index}"),
        ]
    if fold:
        any_error_duplicate = F.lit(False)
        for index, rule in enumerate(rules):
            if rule.severity == "error":
                any_error_duplicate = any_error_duplicate | duplicate[index]
        totals.append(
            F.sum(F.when(any_error_duplicate, F.col("size")).otherwise(F.col("broken"))).alias(
                "invalid"
            )
        )
    return totals
