"""``ContractLandingSensor``: wait until a new batch for a contract has landed (see
:mod:`contract_gate.landing_batches` for what "landed" and "new" mean)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue

from contract_gate.airflow_compat import default_deferrable
from contract_gate.landing_batches import Watch, gated, landed_batch
from contract_gate.operators.base import compile_gate_plan
from contract_gate.triggers.landing import LANDED, LandingTrigger

if TYPE_CHECKING:
    from airflow.sdk import Context


class ContractLandingSensor(BaseSensorOperator):
    """Wait until a batch that was not gated yet has landed and settled at the contract's landing.

    Returns (XCom) ``{contract_id, object, submission_id, landing, kind, files, delta_version}``: the
    submission id is the one the gate will derive for that batch. Reads files and the Delta log
    only (no JVM). A landing holding a link or a special file fails the task with the reason.

    :param contract: path of the ODCS contract file (relative paths resolve against
        the gate's home, ``contract_gate.config.gate_home``). (templated)
    :param env: the contract's server/environment; default the first server. (templated)
    :param object_name: the schema object whose landing is watched; default the contract's only
        (gated) object. (templated)
    :param marker: a file in the landing folder whose presence says the batch is complete
        (``_SUCCESS``); default the contract's ``schedule.onLanding.marker``.
    :param settle_seconds: without a marker, how long nothing in the folder may have changed;
        default the contract's ``schedule.onLanding.settleSeconds``, else its default (a few seconds).
    :param deferrable: wait in the triggerer (:class:`~contract_gate.triggers.landing.LandingTrigger`)
        instead of a worker slot; default Airflow's ``[operators] default_deferrable``.
    """

    template_fields: Sequence[str] = ("contract", "env", "object_name")
    ui_color = "#fdf3e1"

    def __init__(self, *, contract: str, env: str | None = None, marker: str | None = None,
                 settle_seconds: int | None = None, deferrable: bool | None = None, object_name: str | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.contract = contract
        self.env = env
        self.object_name = object_name
        self.marker = marker
        self.settle_seconds = settle_seconds
        self.deferrable = default_deferrable() if deferrable is None else deferrable

    def watch(self) -> Watch:
        plan = compile_gate_plan(self.contract, self.env, self.object_name)
        return Watch.from_plan(plan, marker=self.marker, settle_seconds=self.settle_seconds)

    def poke(self, context: Context) -> bool | PokeReturnValue:
        watch = self.watch()
        batch = landed_batch(watch)
        if batch is None:
            self.log.info("contract %s: no settled batch at the landing yet", watch.contract_id)
            return False
        if gated(watch, batch.submission_id):
            self.log.info("contract %s: the batch at the landing (submission %s) was gated already; waiting "
                          "for a new one", watch.contract_id, batch.submission_id)
            return False
        self.log.info("contract %s: batch %s has landed", watch.contract_id, batch.submission_id)
        return PokeReturnValue(is_done=True, xcom_value={**batch.payload(), "object": watch.object_name})

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        self.defer(trigger=LandingTrigger(**self.watch().as_kwargs(), poll_seconds=self.poke_interval),
                   method_name="execute_complete", timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("status") != LANDED:
            raise RuntimeError(event.get("message") or f"landing trigger ended without a batch: {event}")
        payload = {key: value for key, value in event.items() if key != "status"}
        self.log.info("contract %s: batch %s has landed", payload["contract_id"], payload["submission_id"])
        return payload
