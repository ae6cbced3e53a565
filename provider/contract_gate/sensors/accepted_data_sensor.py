"""``AcceptedDataSensor``: a consumer waits for accepted data only (see
:mod:`contract_gate.freshness.readiness`), without scheduling on the gate's Asset."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue

from contract_gate.airflow_compat import default_deferrable
from contract_gate.operators.base import resolve_contract
from contract_gate.triggers.accepted_data_trigger import ACCEPTED, AcceptedDataTrigger, accepted_data_event

if TYPE_CHECKING:
    from airflow.sdk import Context


class AcceptedDataSensor(BaseSensorOperator):
    """Wait until the object's target holds a published decision covering ``business_date``,
    or, without a business date, until its accepted data is fresh within the contract's SLA.

    Reads the decision log and the target's Delta log (no JVM). Returns (XCom) the decision that
    released it: ``{contract_id, object, reason, submission_id, outcome, decided_at, business_date}``,
    or for freshness ``{contract_id, object, reason, submission_id, age_seconds, sla_seconds}``.

    :param contract: path of the ODCS contract file (relative paths resolve against
        the gate's home, ``contract_gate.config.gate_home``). (templated)
    :param business_date: ISO date (``{{ ds }}``) or timestamp the consumer needs. (templated)
    :param env: the contract's server/environment; default the first server. (templated)
    :param object_name: the schema object whose accepted data is awaited; default the contract's
        only (gated) object. (templated)
    :param deferrable: wait in the triggerer
        (:class:`~contract_gate.triggers.accepted_data_trigger.AcceptedDataTrigger`) instead of a worker slot;
        default Airflow's ``[operators] default_deferrable``.
    """

    template_fields: Sequence[str] = ("contract", "business_date", "env", "object_name")
    ui_color = "#e8f4ea"

    def __init__(self, *, contract: str, business_date: str | None = None, env: str | None = None,
                 deferrable: bool | None = None, object_name: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.object_name = object_name
        self.contract = contract
        self.business_date = business_date
        self.env = env
        self.deferrable = default_deferrable() if deferrable is None else deferrable

    def contract_path(self) -> str:
        return str(resolve_contract(self.contract))

    def poke(self, context: Context) -> bool | PokeReturnValue:
        return self.finish(accepted_data_event(self.contract_path(), self.env or None, self.business_date or None,
                                self.object_name or None))

    def finish(self, event: dict[str, Any] | None) -> bool | PokeReturnValue:
        if event is None:
            self.log.info("no accepted data%s yet", f" for {self.business_date}" if self.business_date else
                          " within the SLA")
            return False
        return PokeReturnValue(is_done=True, xcom_value=self.accepted(event))

    def accepted(self, event: dict[str, Any]) -> dict[str, Any]:
        """What an event found; an event other than ``accepted`` raises its message."""
        if event["status"] != ACCEPTED:
            raise ValueError(event["message"])
        found = {key: value for key, value in event.items() if key != "status"}
        self.log.info("contract %s: accepted (%s) by submission %s", found["contract_id"], found["reason"],
                      found["submission_id"])
        return found

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        self.defer(trigger=AcceptedDataTrigger(self.contract_path(), self.env or None, self.business_date or None,
                                               poll_seconds=self.poke_interval, object_name=self.object_name or None),
                   method_name="execute_complete", timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        return self.accepted(event)
