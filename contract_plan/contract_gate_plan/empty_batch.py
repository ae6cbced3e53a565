"""An empty submission is never published: the built-in rule ``submission.not_empty``.

A landing with no rows (an empty file, a CSV with only its header, an empty folder of files)
would otherwise pass every row rule and be published as a commit that adds nothing, and a
consumer could not tell a quiet day from a broken producer. The validation of a submission (one
with a submission id: every gate run) therefore adds a batch rule that fails when the candidate
has no rows; the engine measures it in the pass that counts the rows anyway, and the report
lists it with the contract's rules. It is not in the plan: like the type rules of a CSV/JSON
input (``contract_gate_spark.validation.unparseable_values``) it is the gate's own, the same for every contract, so a contract
cannot switch it off. Checking a DataFrame in a notebook (no submission) judges the rows only:
an empty DataFrame fails only the contract's own ``rowCount`` rules.
"""

from __future__ import annotations

from contract_gate_plan.model import Rule, Threshold

RULE_ID = "submission.not_empty"


def empty_batch_rule():
    """The rule (the compiler refuses a contract rule with its id, so none can stand in for it)."""
    return Rule(
        id=RULE_ID, kind="row_count", scope="dataset", severity="error",
        source="the gate (an empty submission is never published)",
        description="the submission has no rows",
        threshold=Threshold(operator="mustBeGreaterThan", value=0, unit="rows"),
    )
