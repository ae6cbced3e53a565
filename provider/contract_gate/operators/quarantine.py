"""Quarantine a rejected batch: every row, with the ids of the rules it broke (row rules per
row, batch-level failures on every row), the submission id and the contract version, in the
contract's quarantine table. Consumers never read it; the target is not touched."""

from __future__ import annotations

from contract_gate.operators.outcome import CandidateStepOperator


class GateQuarantineOperator(CandidateStepOperator):
    """Quarantine the whole validated candidate. Pushes ``{"quarantine": {status, rows, version}}``.

    :param submission: the submission task's XCom. (templated)
    :param summary: the validate task's XCom. (templated)
    """

    steps = "quarantine"
