"""Nested fields of struct and array columns, and their rules as row predicates on the column.

A rule on a nested field is compiled as if the field were a column whose name is the field's
dotted path (``address.city``, ``lines[].sku``: the rule ids say it so), then that stand-in
column is replaced by the field's value, and the predicate is wrapped for each level above it:
a struct field holds when its parent is NULL (``required`` means "not null where the parent is
not null"), an array field holds for every element (``forall``). So a nested rule is one more
boolean row predicate in the validation's fused pass, over the top-level column.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from contract_gate_plan.sql_allowlist import check_expression, expression_tree, render_tree
from contract_gate_plan.sql_text import quote_identifier

MAX_DEPTH = 16


@dataclass(frozen=True)
class FieldPath:
    """Where a nested field is: its top-level ``column`` and the ``steps`` below it, each a
    struct field name or ``None`` for "each element of the array"."""

    column: str
    steps: tuple[str | None, ...] = ()

    @property
    def name(self) -> str:
        """The dotted path: ``address.city``, ``lines[].sku``, ``tags[]``."""
        text = self.column
        for step in self.steps:
            text += "[]" if step is None else f".{step}"
        return text

    def field(self, name: str) -> FieldPath:
        return FieldPath(self.column, (*self.steps, name))

    def element(self) -> FieldPath:
        return FieldPath(self.column, (*self.steps, None))

    @property
    def depth(self) -> int:
        return len(self.steps)

    def predicate(self, check: str) -> str:
        """``check``, a predicate on the stand-in column named :attr:`name`, as a predicate on the
        top-level column (in the form the allow-list renders)."""
        value, depth = quote_identifier(self.column), 0
        levels: list[tuple[str, str | None]] = []  # (parent, its element's variable; None for a struct)
        for step in self.steps:
            parent = value
            if step is None:
                depth += 1
                variable = quote_identifier(f"x{depth}")
                levels.append((parent, variable))
                value = variable
            else:
                levels.append((parent, None))
                value = f"{parent}.{quote_identifier(step)}"
        tree = expression_tree(check)
        replacement = expression_tree(value)
        stand_in = self.name
        tree = tree.transform(lambda node: replacement.copy()
                              if isinstance(node, exp.Column) and not node.table and node.name == stand_in else node)
        text = render_tree(tree)
        for parent, element in reversed(levels):
            inner = text if element is None else f"forall({parent}, {element} -> {text})"
            text = f"({parent} IS NULL OR {inner})"
        return check_expression(text)
