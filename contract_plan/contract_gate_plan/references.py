"""Foreign keys, named once for both sides (docs/plan-format.md, rule kind ``references``).

An ODCS ``relationships`` entry of type ``foreignKey`` is a row rule: a batch row whose key (all
parts non-null) is absent from the referenced object's published target fails it. The compiler
writes its predicate on a flag column that only the Spark side adds
(``contract_gate_spark.validation.references``: a join of the batch with the target's distinct
keys, read at a pinned Delta version), so the fused pass, the row diagnostics and the split count
and mark exactly the same rows. Without the flag column the predicate does not analyse, and the
rule is ``not_evaluated``: never a row passed unchecked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from contract_gate_plan.sql_text import quote_identifier

KIND = "references"
SCOPE = "row"
FLAG_PREFIX = "__contract_gate_found_"


def flag_column(rule_id: str) -> str:
    """The column the Spark side adds for rule ``rule_id``: TRUE where the key was found. A hash
    of the id: a rule id is any text, a column name must stay plain."""
    return FLAG_PREFIX + hashlib.sha256(rule_id.encode("utf-8")).hexdigest()[:16]


def predicate(rule_id: str, columns: Sequence[str]) -> str:
    """TRUE for a row with a NULL key part (no reference to check) or a key the target holds."""
    nulls = " OR ".join(f"{quote_identifier(name)} IS NULL" for name in columns)
    return f"({nulls} OR {quote_identifier(flag_column(rule_id))} IS NOT NULL)"
