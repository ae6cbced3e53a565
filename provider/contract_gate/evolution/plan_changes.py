"""The changes between two compiled plans of one schema object, each classified.

A plan says what the gate does: its columns, key, rules and settings. Comparing plans (rather
than YAML) classifies a change by its effect: a DQX ``is_in_list`` and an ODCS ``enum`` that
admit the same values are the same rule, and a bound written ``0`` or ``0.0`` is one bound.
Row predicates are ordered by ``contract_gate_plan.predicate_scope``, types by
``contract_gate_plan.spark_types.type_change``; what neither can decide is breaking, and says why.
"""

from __future__ import annotations

from fractions import Fraction

from contract_gate.evolution.changes import Change, Impact, shown, worst
from contract_gate_plan.predicate_scope import Scope, compare_predicates
from contract_gate_plan.spark_types import type_change
from contract_gate_plan.thresholds import exact

_KEY_RULES = ("key.unique", "key.unique_across_batches")
# Gate settings compared on their own below, or through the plan's resolved table addresses.
_GATE_COMPARED = {"publication", "violations", "schemaPolicy", "landing", "target", "quarantine", "decisions",
                  "candidate", "references"}
_BREAKING_TABLES = {"target": "consumers read another table", "landing": "producers deliver to another place"}


def plan_changes(object_name: str, old: dict, new: dict) -> list[Change]:
    found: list[Change] = []

    def add(impact: Impact, subject: str, message: str) -> None:
        found.append(Change(impact, object_name, subject, message))

    new_columns = _column_changes(old, new, add)
    key_changed = old["key"] != new["key"]
    if key_changed:
        add(Impact.BREAKING, "key", f"business key {shown(old['key'])} -> {shown(new['key'])}: rows are matched "
                                    "and deduplicated on other columns")
    _rule_changes(old, new, new_columns, key_changed, add)
    _setting_changes(old, new, add)
    return found


# -- columns -------------------------------------------------------------------------------------

def _column_changes(old: dict, new: dict, add) -> set[str]:
    """Report column changes; return the names of the new columns."""
    before = {c["name"]: c for c in old["columns"]}
    after = {c["name"]: c for c in new["columns"]}
    added = [name for name in after if name not in before]
    for name, column in before.items():
        if name not in after:
            renamed = [n for n in added if after[n]["type"] == column["type"]]
            hint = f" (renamed to {shown(renamed[0])}?)" if len(renamed) == 1 else ""
            add(Impact.BREAKING, f"column {shown(name)}", f"removed{hint}: consumers reading it break")
    for name in added:
        column = after[name]
        if column["nullable"]:
            add(Impact.NON_BREAKING, f"column {shown(name)}", f"added, nullable, type {column['type']}")
        else:
            add(Impact.BREAKING, f"column {shown(name)}", f"added as required (type {column['type']}): batches "
                                                         "without it are rejected, and rows already published have no value")
    for name in before.keys() & after.keys():
        _one_column(name, before[name], after[name], add)
    return set(added)


def _one_column(name: str, old: dict, new: dict, add) -> None:
    subject = f"column {shown(name)}"
    change = type_change(old["type"], new["type"])
    if change == "widened":
        add(Impact.NON_BREAKING, subject, f"type {old['type']} -> {new['type']} (widened: every old value fits)")
    elif change == "narrowed":
        add(Impact.BREAKING, subject, f"type {old['type']} -> {new['type']} (narrowed: values of {old['type']} may not fit)")
    elif change == "changed":
        add(Impact.BREAKING, subject, f"type {old['type']} -> {new['type']} (neither holds every value of the other)")
    if old["nullable"] and not new["nullable"]:
        add(Impact.BREAKING, subject, "made required: batches with NULL in it are now rejected")
    elif new["nullable"] and not old["nullable"]:
        add(Impact.NON_BREAKING, subject, "no longer required: consumers may now read NULL")
    if old.get("allow_non_finite") and not new.get("allow_non_finite"):
        add(Impact.BREAKING, subject, "NaN and Infinity no longer fit it")
    elif new.get("allow_non_finite") and not old.get("allow_non_finite"):
        add(Impact.NON_BREAKING, subject, "NaN and Infinity now fit it")
    if old.get("classification") != new.get("classification"):
        add(Impact.INFORMATIONAL, subject,
            f"classification {shown(old.get('classification'))} -> {shown(new.get('classification'))}")
    if old.get("sample_allowed") != new.get("sample_allowed"):
        add(Impact.INFORMATIONAL, subject, "samples of its values " + ("allowed" if new.get("sample_allowed") else "no longer allowed"))


# -- rules ---------------------------------------------------------------------------------------

def _rule_changes(old: dict, new: dict, new_columns: set[str], key_changed: bool, add) -> None:
    # a column's required rule is its nullability, reported with the column
    before = {r["id"]: r for r in old["rules"] if r["kind"] != "required"}
    after = {r["id"]: r for r in new["rules"] if r["kind"] != "required"}
    for rule_id, rule in before.items():
        if rule_id in after or (key_changed and rule_id in _KEY_RULES):
            continue
        if rule["kind"] == "text":
            add(Impact.INFORMATIONAL, f"rule {shown(rule_id)}", "removed (text: not executed)")
        elif rule["severity"] == "warning":
            add(Impact.NON_BREAKING, f"rule {shown(rule_id)}", "removed (a warning: it never blocked a batch)")
        else:
            add(Impact.NON_BREAKING, f"rule {shown(rule_id)}", "removed: batches it failed are now accepted")
    for rule_id, rule in after.items():
        if rule_id in before or (key_changed and rule_id in _KEY_RULES):
            continue
        subject = f"rule {shown(rule_id)}"
        if rule["kind"] == "text":
            add(Impact.INFORMATIONAL, subject, "added (text: not executed)")
        elif rule["severity"] == "warning":
            add(Impact.NON_BREAKING, subject, "added as a warning: it never blocks a batch")
        elif rule["columns"] and set(rule["columns"]) <= new_columns:
            add(Impact.NON_BREAKING, subject, "added on a new column only")
        else:
            add(Impact.BREAKING, subject, f"new error rule ({rule['kind']}): batches it fails are now rejected")
    for rule_id in before.keys() & after.keys():
        if key_changed and rule_id in _KEY_RULES:
            continue
        aspects = _rule_aspects(before[rule_id], after[rule_id])
        if aspects:
            impact = worst(impact for impact, _ in aspects)
            add(impact, f"rule {shown(rule_id)}", "; ".join(text for _, text in aspects))


def _rule_aspects(old: dict, new: dict) -> list[tuple[Impact, str]]:
    if old["kind"] != new["kind"]:
        return [(Impact.BREAKING, f"kind {old['kind']} -> {new['kind']}: whether it rejects more cannot be decided")]
    aspects: list[tuple[Impact, str]] = []
    if old["severity"] != new["severity"]:
        if new["severity"] == "error":
            aspects.append((Impact.BREAKING, "now an error: batches it fails are rejected"))
        else:
            aspects.append((Impact.NON_BREAKING, "now a warning: it no longer blocks a batch"))
    strictness = _strictness(old, new)
    if new["severity"] == "warning":
        # a warning never blocks, however strict it became
        strictness = [(Impact.NON_BREAKING if impact is Impact.BREAKING else impact, f"{text} (a warning)")
                      for impact, text in strictness]
    return aspects + strictness


def _strictness(old: dict, new: dict) -> list[tuple[Impact, str]]:
    aspects = []
    if old.get("predicate") and new.get("predicate"):
        aspects += _scoped("", compare_predicates(old["predicate"], new["predicate"]))
    elif old.get("predicate") != new.get("predicate"):
        aspects.append((Impact.BREAKING, "its check changed form: whether it rejects more cannot be decided"))
    if old.get("query") != new.get("query"):
        aspects.append((Impact.BREAKING, "two different SQL checks: whether the new query fails more batches "
                                         "cannot be decided"))
    if old.get("filter") != new.get("filter"):
        if old.get("filter") is None:
            aspects.append((Impact.NON_BREAKING, "now evaluates only the rows its filter selects"))
        elif new.get("filter") is None:
            aspects.append((Impact.BREAKING, "its filter was removed: it now evaluates every row"))
        else:  # a filter that selects more rows makes the rule judge more rows
            aspects += _scoped("filter: ", compare_predicates(old["filter"], new["filter"]), inverted=True)
    aspects += _threshold_aspects(old.get("threshold"), new.get("threshold"))
    if old["kind"] == "unique" and not old.get("predicate"):
        aspects += _uniqueness_aspects(old, new)
    return aspects


def _scoped(prefix: str, comparison, inverted: bool = False) -> list[tuple[Impact, str]]:
    scope = comparison.scope
    if inverted and scope in (Scope.WIDER, Scope.NARROWER):
        scope = Scope.NARROWER if scope is Scope.WIDER else Scope.WIDER
    if scope is Scope.SAME:
        return []
    if scope is Scope.WIDER:
        return [(Impact.NON_BREAKING, f"{prefix}relaxed: {comparison.reason}")]
    if scope is Scope.NARROWER:
        return [(Impact.BREAKING, f"{prefix}tightened: {comparison.reason}")]
    if scope is Scope.MIXED:
        return [(Impact.BREAKING, f"{prefix}tightened and relaxed at once: {comparison.reason}")]
    return [(Impact.BREAKING, f"{prefix}{comparison.reason}")]


def _uniqueness_aspects(old: dict, new: dict) -> list[tuple[Impact, str]]:
    aspects = []
    before, after = set(old["columns"]), set(new["columns"])
    if before != after:
        if before < after:
            aspects.append((Impact.NON_BREAKING, f"unique over more columns {shown(new['columns'])}: fewer duplicates"))
        elif after < before:
            aspects.append((Impact.BREAKING, f"unique over fewer columns {shown(new['columns'])}: more duplicates"))
        else:
            aspects.append((Impact.BREAKING, f"unique over other columns {shown(new['columns'])}: cannot be decided"))
    if old.get("nulls_distinct", True) != new.get("nulls_distinct", True):
        if new.get("nulls_distinct", True):
            aspects.append((Impact.NON_BREAKING, "NULL keys are no longer duplicates of each other"))
        else:
            aspects.append((Impact.BREAKING, "NULL keys are now duplicates of each other"))
    return aspects


# -- thresholds: the measured values a threshold accepts, as intervals ---------------------------

_INFINITE = None
_Interval = tuple[Fraction | None, bool, Fraction | None, bool]  # a bound of _INFINITE is open


def _accepted(threshold: dict | None) -> list[_Interval]:
    """Intervals (low, low inclusive, high, high inclusive) of the measured values that pass;
    without a threshold a rule passes only on 0."""
    if threshold is None:
        return [(exact(0), True, exact(0), True)]
    operator, value = threshold["operator"], threshold["value"]
    if isinstance(value, list):
        low, high = exact(value[0]), exact(value[1])
        between: dict[str, list[_Interval]] = {
            "mustBeBetween": [(low, True, high, True)],
            "mustNotBeBetween": [(_INFINITE, False, low, False), (high, False, _INFINITE, False)]}
        return between[operator]
    v = exact(value)
    compared: dict[str, list[_Interval]] = {
        "mustBe": [(v, True, v, True)],
        "mustNotBe": [(_INFINITE, False, v, False), (v, False, _INFINITE, False)],
        "mustBeGreaterThan": [(v, False, _INFINITE, False)],
        "mustBeGreaterOrEqualTo": [(v, True, _INFINITE, False)],
        "mustBeLessThan": [(_INFINITE, False, v, False)],
        "mustBeLessOrEqualTo": [(_INFINITE, False, v, True)]}
    return compared[operator]


def _inside(inner: _Interval, outer: _Interval) -> bool:
    low, low_in, high, high_in = inner
    o_low, o_low_in, o_high, o_high_in = outer
    low_ok = o_low is None or (low is not None and (low > o_low or (low == o_low and (o_low_in or not low_in))))
    high_ok = o_high is None or (high is not None and (high < o_high or (high == o_high and (o_high_in or not high_in))))
    return low_ok and high_ok


def _covers(outer: list[_Interval], inner: list[_Interval]) -> bool:
    return all(any(_inside(part, whole) for whole in outer) for part in inner)


def _threshold_text(threshold: dict | None) -> str:
    if threshold is None:
        return "none (0 failures)"
    return f"{threshold['operator']} {shown(threshold['value'])} {threshold['unit']}"


def _threshold_aspects(old: dict | None, new: dict | None) -> list[tuple[Impact, str]]:
    if old == new:
        return []
    text = f"threshold {_threshold_text(old)} -> {_threshold_text(new)}"
    if old is not None and new is not None and old["unit"] != new["unit"]:
        return [(Impact.BREAKING, f"{text}: rows and percent cannot be compared, so it is not decided")]
    before, after = _accepted(old), _accepted(new)
    looser, tighter = _covers(after, before), _covers(before, after)
    if looser and tighter:
        return []
    if looser:
        return [(Impact.NON_BREAKING, f"{text} (loosened)")]
    if tighter:
        return [(Impact.BREAKING, f"{text} (tightened)")]
    return [(Impact.BREAKING, f"{text} (accepts some counts it refused and refuses some it accepted)")]


# -- settings, tables, access ---------------------------------------------------------------------

def _setting_changes(old: dict, new: dict, add) -> None:
    old_gate, new_gate = old.get("gate"), new.get("gate")
    if old_gate is None or new_gate is None:
        if old_gate is not None:
            add(Impact.BREAKING, "gate", "gate settings removed: the object is no longer gated")
        elif new_gate is not None:
            add(Impact.NON_BREAKING, "gate", "gate settings added: the object is now gated")
    else:
        _gate_changes(old_gate, new_gate, add)
        _table_changes(old.get("tables") or {}, new.get("tables") or {}, add)
    if old["schema_policy"] != new["schema_policy"]:
        impact = Impact.NON_BREAKING if new["schema_policy"] == "additive" else Impact.BREAKING
        add(impact, "gate: schemaPolicy", f"{old['schema_policy']} -> {new['schema_policy']}"
            + (": batches with extra columns are now rejected" if impact is Impact.BREAKING else ""))
    _access_changes(old.get("access") or {}, new.get("access") or {}, add)


def _gate_changes(old: dict, new: dict, add) -> None:
    mode_before, mode_after = old["publication"]["mode"], new["publication"]["mode"]
    if mode_before != mode_after:
        add(Impact.BREAKING, "gate: publication.mode", f"{mode_before} -> {mode_after}: rows are published another way")
    policy_before, policy_after = old["violations"], new["violations"]
    if policy_before["policy"] != policy_after["policy"]:
        if policy_after["policy"] == "reject_batch":
            add(Impact.BREAKING, "gate: violations.policy", "split_rows -> reject_batch: a batch with invalid rows "
                                                            "is now rejected whole")
        else:
            add(Impact.NON_BREAKING, "gate: violations.policy", "reject_batch -> split_rows: the valid rows of a "
                                                                "batch with invalid rows are now published")
    elif policy_after["policy"] == "split_rows":
        share_before, share_after = policy_before.get("maxInvalidShare"), policy_after.get("maxInvalidShare")
        if share_before != share_after:
            looser = share_after is None or (share_before is not None and share_after > share_before)
            add(Impact.NON_BREAKING if looser else Impact.BREAKING, "gate: violations.maxInvalidShare",
                f"{shown(share_before)} -> {shown(share_after)}: "
                + ("fewer batches are rejected whole" if looser else "more batches are rejected whole"))
    for key in sorted((old.keys() | new.keys()) - _GATE_COMPARED):
        if old.get(key) != new.get(key):
            add(Impact.INFORMATIONAL, f"gate: {key}", f"{shown(old.get(key))} -> {shown(new.get(key))}")


def _table_changes(old: dict, new: dict, add) -> None:
    for role in sorted(old.keys() | new.keys()):
        if old.get(role) == new.get(role):
            continue
        why = _BREAKING_TABLES.get(role)
        add(Impact.BREAKING if why else Impact.NON_BREAKING, f"table: {role}",
            f"{shown(old.get(role))} -> {shown(new.get(role))}" + (f": {why}" if why else ""))


def _access_changes(old: dict, new: dict, add) -> None:
    consumers_before, consumers_after = set(old.get("consumers", [])), set(new.get("consumers", []))
    for role in sorted(consumers_before - consumers_after):
        add(Impact.BREAKING, f"access: {shown(role)}", "no longer a consumer: it loses read access to the target")
    for role in sorted(consumers_after - consumers_before):
        add(Impact.NON_BREAKING, f"access: {shown(role)}", "new consumer")
    if set(old.get("owners", [])) != set(new.get("owners", [])):
        add(Impact.INFORMATIONAL, "access: owners", f"{shown(sorted(old.get('owners', [])))} -> "
                                                    f"{shown(sorted(new.get('owners', [])))}")

