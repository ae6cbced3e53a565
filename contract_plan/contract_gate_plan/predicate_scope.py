"""Whether a new row predicate admits more or fewer rows than an old one, where their shapes say so.

The compiler writes a value rule as ``(c IS NULL OR <check>)`` and its checks as bounds
(``c >= 0``, ``char_length(c) <= 10``), lists (``c IN ('USD', 'EUR')``) and other conjuncts
(``c RLIKE '...'``). A predicate is read as those parts: whether NULL is admitted, an interval of
values, an interval of lengths, a list of values, and every other conjunct as its rendered text.
Two predicates on one column whose other conjuncts render alike are ordered part by part; any
other pair (two regular expressions, two SQL expressions) cannot be decided, and says why.

Used by the contract diff and by the target's migration (``contract_gate_plan.migration``), on the
plan's predicates and on the CHECK text Delta keeps (re-spaced, same tokens). Standard library
and sqlglot only.
"""

from __future__ import annotations

import datetime
import decimal
import enum
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from contract_gate_plan.sql_allowlist import SqlRefused, SuffixedNumber, TypedLiteral, expression_tree, render_tree


class Scope(str, enum.Enum):
    """What the new predicate admits, compared with the old one."""

    SAME = "same"
    WIDER = "wider"
    NARROWER = "narrower"
    MIXED = "mixed"  # admits some rows the old one refused, and refuses some it admitted
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Comparison:
    scope: Scope
    reason: str
    """What changed, in a line (empty for SAME)."""


@dataclass(frozen=True)
class _Bound:
    value: Any  # a number, date or timestamp: compared only with a bound of its own kind
    inclusive: bool
    text: str  # as the predicate writes it, e.g. ">= 0"


@dataclass
class _Interval:
    kind: str | None = None
    low: _Bound | None = None
    high: _Bound | None = None

    def tighten(self, kind: str, side: str, bound: _Bound) -> bool:
        """Add a bound; False when the kinds of value cannot be compared."""
        if self.kind not in (None, kind):
            return False
        self.kind = kind
        current = getattr(self, side)
        if current is None or _within(bound, current, side):
            setattr(self, side, bound)
        return True


@dataclass
class _Shape:
    column: str | None = None
    nulls: bool = False
    value: _Interval = field(default_factory=_Interval)
    length: _Interval = field(default_factory=_Interval)
    values: dict | None = None  # (kind, value) -> literal text; None: any value
    other: dict = field(default_factory=dict)  # rendered text -> node


_FLIPPED: dict[type[exp.Expr], type[exp.Expr]] = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT, exp.EQ: exp.EQ}
_SYMBOL: dict[type[exp.Expr], str] = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<", exp.EQ: "="}


def compare_predicates(old: str, new: str) -> Comparison:
    """How ``new`` relates to ``old`` as row predicates (TRUE = the row is valid)."""
    if old == new:
        return Comparison(Scope.SAME, "")
    try:
        old_shape, new_shape = _shape(old), _shape(new)
    except SqlRefused as exc:
        return Comparison(Scope.UNDECIDED, f"a predicate does not parse: {exc}")
    if old_shape.column != new_shape.column:
        return Comparison(Scope.UNDECIDED, "two different SQL expressions (they read different columns): "
                                           "whether the new one rejects more cannot be decided")
    if old_shape.other.keys() != new_shape.other.keys():
        changed = [*old_shape.other.values(), *new_shape.other.values()]
        if any(isinstance(node, exp.RegexpLike) for node in changed):
            why = "two different regular expressions: whether the new one matches fewer values cannot be decided"
        else:
            why = "two different SQL expressions: whether the new one rejects more cannot be decided"
        return Comparison(Scope.UNDECIDED, why)
    parts = [_nulls(old_shape.nulls, new_shape.nulls),
             _intervals("value", old_shape.value, new_shape.value),
             _intervals("length", old_shape.length, new_shape.length),
             _lists(old_shape.values, new_shape.values)]
    compared = [part for part in parts if part is not None]
    if len(compared) != len(parts):
        return Comparison(Scope.UNDECIDED, "bounds of different kinds of value: which admits more cannot be decided")
    changed = [part for part in compared if part[0] is not Scope.SAME]
    reason = "; ".join(text for _, text in changed)
    scopes = {scope for scope, _ in changed}
    if not scopes:
        return Comparison(Scope.SAME, "")
    if len(scopes) == 1:
        return Comparison(scopes.pop(), reason)
    return Comparison(Scope.MIXED, reason)


# -- reading a predicate ---------------------------------------------------------------------

def _shape(text: str) -> _Shape:
    shape = _Shape()
    tree = _unparen(expression_tree(text))
    rest = tree
    if isinstance(tree, exp.Or):
        sides = [_unparen(tree.this), _unparen(tree.expression)]
        for i, side in enumerate(sides):
            if isinstance(side, exp.Is) and isinstance(side.expression, exp.Null) and isinstance(side.this, exp.Column):
                shape.column, shape.nulls, rest = side.this.name, True, sides[1 - i]
                break
    for part in _conjuncts(rest):
        if not _read_conjunct(shape, part):
            shape.other[render_tree(part)] = part
    return shape


def _read_conjunct(shape: _Shape, part: exp.Expr) -> bool:
    """Fold one conjunct into ``shape``; False when it is none of the shapes read here."""
    if isinstance(part, exp.Not) and isinstance(part.this, exp.Is) and isinstance(part.this.expression, exp.Null):
        return _same_column(shape, part.this.this)  # c IS NOT NULL: NULL not admitted
    if isinstance(part, exp.Not) and isinstance(part.this, exp.IsNan):
        return _same_column(shape, part.this.this)  # the float guard the compiler adds to a range
    if isinstance(part, exp.In) and not part.args.get("query") and part.expressions:
        items = [_literal(item) for item in part.expressions]
        if any(item is None for item in items) or not _same_column(shape, part.this):
            return False
        listed = {item: render_tree(node) for item, node in zip(items, part.expressions)}
        shape.values = listed if shape.values is None else {k: v for k, v in shape.values.items() if k in listed}
        return True
    if type(part) in _FLIPPED:
        subject, literal, kind = part.this, part.expression, type(part)
        if _literal(subject) is not None:
            subject, literal, kind = literal, subject, _FLIPPED[kind]
        value = _literal(literal)
        if value is None:
            return False
        interval, target = (shape.length, subject.this) if isinstance(subject, exp.Length) else (shape.value, subject)
        if not _same_column(shape, target):
            return False
        text = f"{_SYMBOL[kind]} {render_tree(literal)}"
        if kind in (exp.GTE, exp.GT, exp.EQ):
            if not interval.tighten(value[0], "low", _Bound(value[1], kind is not exp.GT, text)):
                return False
        if kind in (exp.LTE, exp.LT, exp.EQ):
            if not interval.tighten(value[0], "high", _Bound(value[1], kind is not exp.LT, text)):
                return False
        return True
    return False


def _same_column(shape: _Shape, node: exp.Expr) -> bool:
    if not isinstance(node, exp.Column) or node.table:
        return False
    if shape.column is None:
        shape.column = node.name
    return shape.column == node.name


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = _unparen(node)
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _literal(node: exp.Expr) -> tuple[str, object] | None:
    """(kind, comparable value) of a literal the compiler writes, or None."""
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, SuffixedNumber):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_number:
        try:
            number = decimal.Decimal(str(node.this))
        except decimal.InvalidOperation:
            return None
        return "number", -number if negative else number
    if negative:
        return None
    if isinstance(node, exp.Literal) and node.is_string:
        return "string", node.this
    if isinstance(node, exp.Boolean):
        return "boolean", bool(node.this)
    if isinstance(node, TypedLiteral):
        text, type_name = node.this.this, render_tree(node.args["to"]).lower()
        try:
            if type_name == "date":
                return "date", datetime.date.fromisoformat(text)
            moment = datetime.datetime.fromisoformat(text)
        except ValueError:
            return None
        # a timestamp without an offset is read in the session's time zone: not comparable with one that has
        return ("timestamp", moment) if moment.tzinfo is None else ("timestamp+offset", moment)
    return None


# -- comparing the parts -----------------------------------------------------------------------

def _within(inner: _Bound, outer: _Bound, side: str) -> bool:
    """Whether the bound ``inner`` admits no value that ``outer`` refuses, on ``side`` (low/high)."""
    if inner.value == outer.value:
        return outer.inclusive or not inner.inclusive
    return inner.value > outer.value if side == "low" else inner.value < outer.value


def _nulls(old: bool, new: bool) -> tuple[Scope, str]:
    if old == new:
        return Scope.SAME, ""
    return (Scope.WIDER, "NULL now admitted") if new else (Scope.NARROWER, "NULL no longer admitted")


def _intervals(what: str, old: _Interval, new: _Interval) -> tuple[Scope, str] | None:
    if old.kind and new.kind and old.kind != new.kind:
        return None
    scopes, texts = set(), []
    for side, name in (("low", "lower"), ("high", "upper")):
        before, after = getattr(old, side), getattr(new, side)
        if before is None and after is None:
            continue
        if before is not None and after is not None and before.value == after.value and before.inclusive == after.inclusive:
            continue
        if after is None or (before is not None and _within(before, after, side)):
            scopes.add(Scope.WIDER)
        else:
            scopes.add(Scope.NARROWER)
        texts.append(f"{what} {name} bound {before.text if before else 'none'} -> {after.text if after else 'none'}")
    if not scopes:
        return Scope.SAME, ""
    return (scopes.pop() if len(scopes) == 1 else Scope.MIXED), ", ".join(texts)


def _lists(old: dict | None, new: dict | None) -> tuple[Scope, str] | None:
    if old is None:
        if new is None:
            return Scope.SAME, ""
        return Scope.NARROWER, f"now only the values {', '.join(new.values())}"
    if new is None:
        return Scope.WIDER, "no list of values any more"
    if len({kind for kind, _ in [*old, *new]}) > 1:
        return None
    added = [text for key, text in new.items() if key not in old]
    removed = [text for key, text in old.items() if key not in new]
    texts = [*([f"values added: {', '.join(added)}"] if added else []),
             *([f"values removed: {', '.join(removed)}"] if removed else [])]
    if added and removed:
        return Scope.MIXED, "; ".join(texts)
    if added:
        return Scope.WIDER, texts[0]
    if removed:
        return Scope.NARROWER, texts[0]
    return Scope.SAME, ""
