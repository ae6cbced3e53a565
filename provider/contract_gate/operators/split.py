"""Split a batch by row (violation policy ``split_rows``): the valid rows are published and the
invalid rows quarantined with their rule ids, both from the same validated candidate version,
in one Spark job. Valid plus invalid is every landed row: the two sides are one test's two
answers (``contract_gate_spark.validation.diagnostics.split``)."""

from __future__ import annotations

from contract_gate.operators.outcome import PublishingStepOperator


class GateSplitOperator(PublishingStepOperator):
    """Publish the valid rows and quarantine the invalid ones.

    Pushes ``{"publish": {...}, "quarantine": {...}}``. Give the target's Asset as ``outlets``
    to emit the publication event.

    :param submission: the submission task's XCom. (templated)
    :param summary: the validate task's XCom. (templated)
    """

    steps = "split"
