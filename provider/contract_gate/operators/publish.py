"""Publish the validated candidate version to the target in one atomic, idempotent Delta commit.

The commit carries the submission id (``userMetadata``) and Delta's idempotent-write pair, so a
retried or cleared task finds its commit already there (``already_published``) instead of
writing it again. An Asset event for the target table carries ``{submission_id, version, rows}``.
"""

from __future__ import annotations

from contract_gate.operators.outcome import PublishingStepOperator


class GatePublishOperator(PublishingStepOperator):
    """Publish every row of the validated candidate (the contract's mode: ``append`` or
    ``replace_keys``; a correction re-run publishes with ``replace_keys``).

    Pushes ``{"publish": {status, target_version_before, target_version_after, rows, ...}}``.
    Give the target's Asset as ``outlets`` to emit the publication event.

    :param submission: the submission task's XCom. (templated)
    :param summary: the validate task's XCom. (templated)
    """

    steps = "publish"
