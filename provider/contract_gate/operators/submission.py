"""Resolve which batch this run gates, and under which submission id; no Spark.

Runs first so that every later task, including the decision record after a failure, knows the
submission id. It first repairs the contract's decision log: a publish or quarantine whose run
died before recording it is found in the tables' commit history and recorded
(:func:`contract_gate.decisions.recover_missing_decisions`). The id is the param when one is given, else derived from the landed batch's
content (:mod:`contract_gate.submission`), so re-triggering an unchanged batch resolves to the
same id and the run ends without a second publication.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract_gate import decisions
from contract_gate.airflow_compat import AirflowSkipException
from contract_gate.contract.landing_override import landing_override_problem
from contract_gate.operators.base import ContractGateBaseOperator, as_correction, resolve_contract
from contract_gate.contract.retry_policy import RetryPolicy
from contract_gate.submission import NothingLanded, check_submission_id, derive_submission_id, object_of
from contract_gate_plan.model import Plan

if TYPE_CHECKING:
    from airflow.sdk import Context


class GateSubmissionOperator(ContractGateBaseOperator):
    """Pick the landing, the submission id and the re-run link for one gate run.

    Pushes ``{submission_id, landing, rerun_of, correction, prior_decision, received_at}``; ``prior_decision``
    is the submission's existing final decision when it was already gated (the run then has
    nothing to do).

    :param landing: override of the contract's landing path (a corrected batch, a test file), read only
        where the contract's own landing could be (``contract_gate.contract.landing_override``). (templated)
    :param landing_format: the override's format (``csv``, ``json``, ``parquet``, ``delta``);
        default the contract's landing format. (templated)
    :param rerun_of: the submission this run re-runs; it must have a decision, and a published
        one is only re-run as a correction. (templated)
    :param correction: publish with key replacement (``replace_keys``) instead of the
        contract's mode; required to re-run a submission that was published. (templated)
    :param overrides_for: in a DAG gating several objects, the object that ``submission_id``,
        ``landing``, ``landing_format``, ``rerun_of`` and ``correction`` are meant for; the other
        objects ignore them. Giving any of them without naming the object is refused. (templated)
    """

    template_fields = (*ContractGateBaseOperator.template_fields, "landing", "landing_format", "rerun_of", "correction",
                      "overrides_for")

    def __init__(
        self,
        *,
        landing: str | None = None,
        landing_format: str | None = None,
        rerun_of: str | None = None,
        correction: bool | str = False,
        overrides_for: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.landing = landing
        self.landing_format = landing_format
        self.rerun_of = rerun_of
        self.correction = correction
        self.overrides_for = overrides_for

    def execute(self, context: Context) -> dict[str, Any]:
        received_at = datetime.now(timezone.utc)
        self.apply_overrides_to_this_object()
        plan = self.load_plan()
        for recovered in decisions.recover_missing_decisions(plan):
            self.log.warning("recovered the missing decision of submission %s: %s (from the tables' commit history)",
                             recovered["submission_id"], recovered["outcome"])
        landing = landing_of_run(plan, resolve_contract(self.contract), self.env or None,
                                 str(self.landing) if self.landing else None, self.landing_format or None)
        rerun_of = self.rerun_of or None
        correction = _flag(self.correction)
        if rerun_of:
            refusal = rerun_refusal(plan, check_submission_id(rerun_of), correction)
            if refusal:
                raise ValueError(refusal)
        if self.submission_id:
            submission_id = check_submission_id(str(self.submission_id))
        else:
            try:
                submission_id = derive_submission_id(plan.contract_id, landing, rerun_of, plan.connection_id,
                                                     object_of(plan.object, plan.names.sole))
            except NothingLanded as exc:
                if self.landing or rerun_of:  # a batch that was asked for by name must exist
                    raise
                # a schedule that starts before the producer's first batch is not a fault
                raise AirflowSkipException(f"{exc}; nothing to gate") from exc
        prior = decisions.final_decision(plan, submission_id)
        if prior is not None:
            self.log.info("submission %s was already gated: %s; nothing to do", submission_id, prior.get("outcome"))
        elif not self.submission_id and not rerun_of:
            self.refuse_after_failed_runs(plan, submission_id)
            self.log.info("submission %s from %s", submission_id, landing.get("path") or landing.get("name"))
        else:
            self.log.info("submission %s from %s%s", submission_id, landing.get("path") or landing.get("name"),
                          f" (re-run of {rerun_of})" if rerun_of else "")
        return {
            "submission_id": submission_id,
            "landing": landing,
            "rerun_of": rerun_of,
            "correction": correction,
            "plan_fingerprint": (as_correction(plan) if correction else plan).fingerprint,
            "prior_decision": _brief(prior),
            "received_at": received_at.isoformat(),  # the receipt of the receipt-to-publication metric
        }


    def refuse_after_failed_runs(self, plan: Plan, submission_id: str) -> None:
        """A scheduled run gates a batch whose earlier runs failed again, until the retry policy's
        ``runs_per_batch`` is used up (``contract_gate.contract.retry_policy``); then the batch waits for a person
        (a re-run, or a new batch), and this run is skipped."""
        failed = decisions.failed_runs(plan, submission_id)
        allowed = RetryPolicy.of(plan.gate).runs_per_batch
        if failed >= allowed:
            raise AirflowSkipException(
                f"submission {submission_id} failed in {failed} runs (runs per batch: {allowed}); it is not gated "
                "again by itself: fix the cause and re-run it (`contract-gate rerun`), or land a new batch")
        if failed:
            self.log.warning("submission %s failed in %d earlier run(s); gating it again (run %d of %d)",
                             submission_id, failed, failed + 1, allowed)

    def apply_overrides_to_this_object(self) -> None:
        """In a gate of several objects, keep the run's overrides only in the named object's group."""
        if self.overrides_for is None or not self.object_name:
            return
        given = [name for name in OVERRIDES if _given(getattr(self, name))]
        if given and not self.overrides_for:
            raise ValueError(f"{', '.join(given)} given for a contract that gates several objects: name the "
                             "object they are meant for in the run's `object` param")
        if given and self.overrides_for != self.object_name:
            self.log.info("the run's %s are for object %s; object %s gates its landing as usual",
                          ", ".join(given), self.overrides_for, self.object_name)
            self.submission_id = self.landing = self.landing_format = self.rerun_of = None
            self.correction = False


OVERRIDES = ("submission_id", "landing", "landing_format", "rerun_of", "correction")


def landing_of_run(plan: Plan, contract: Path, env: str | None, landing: str | None,
                   landing_format: str | None) -> dict[str, Any]:
    """Where a run reads its batch (the submission's XCom): the plan's landing as the plan writes
    it, or the run's ``landing`` override, read only where the contract's own landing could be
    (``contract_gate.contract.landing_override``; else ``ValueError``, before anything is read)."""
    planned = dict(plan.document["tables"]["landing"])
    if not landing:
        return planned
    refused = landing_override_problem(contract, env, landing)
    if refused:
        raise ValueError(f"the run's landing {landing!r} is not read: {refused}")
    return {"kind": "path", "path": landing, "format": landing_format or planned.get("format", "delta"),
            **({"options": planned["options"]} if planned.get("options") else {})}


def _given(value: object) -> bool:
    """Whether a templated override was given: it renders to '' (or False) when it was not."""
    return value is not None and str(value).strip().lower() not in ("", "false", "none")


def rerun_refusal(plan: Plan, rerun_of: str, correction: bool) -> str | None:
    """Why ``rerun_of`` may not be re-run (None when it may): it must have a decision, and a
    published submission is only re-run as an explicit correction (else its rows publish twice)."""
    previous = decisions.final_decision(plan, rerun_of)
    if previous is None:
        return f"cannot re-run {rerun_of}: contract {plan.contract_id} has no final decision for it"
    if previous.get("outcome") in decisions.PUBLISHED_OUTCOMES and not correction:
        return (f"submission {rerun_of} was already {previous['outcome']}; re-running it would publish its rows "
                "again. Ask for a correction (replace_keys) explicitly to replace them.")
    return None


def _flag(value: bool | str) -> bool:
    """A templated boolean arrives as text when the param is rendered."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _brief(decision: dict | None) -> dict | None:
    """The fields of a decision that tell a later task (and the XCom reader) what happened."""
    if decision is None:
        return None
    return {key: decision.get(key) for key in ("submission_id", "outcome", "decided_at", "target_version_after")}
