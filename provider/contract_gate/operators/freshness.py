"""The task that runs one freshness check for a contract (see :mod:`contract_gate.freshness.check`)."""

from __future__ import annotations

from collections.abc import Sequence

from airflow.sdk import BaseOperator

from contract_gate.operators.base import compile_gate_plan


class FreshnessCheckOperator(BaseOperator):
    """Compare the contract's latest accepted business date with its freshness SLA, alert once
    per stale episode through the contract's notifiers, write the status record.

    The contract is compiled when the task runs, so an edited SLA applies from the next check.
    Reads only the Delta log (or the Databricks SQL warehouse): no Spark, no JVM.

    :param contract: path of the ODCS contract file.
    :param env: server name or environment to resolve addresses for (default: the first server).
    :param object_name: the schema object whose freshness is checked; default the contract's only
        (gated) object. (templated)
    :return: the status record (XCom).
    """

    template_fields: Sequence[str] = ("contract", "env", "object_name")
    ui_color = "#e8f4ea"

    def __init__(self, *, contract: str, env: str | None = None, object_name: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.contract = contract
        self.env = env
        self.object_name = object_name

    def execute(self, context) -> dict:
        # Imported here: the Delta reader pulls in deltalake and pyarrow, which DAG parsing must not pay.
        from contract_gate.freshness.check import check_freshness

        record = check_freshness(compile_gate_plan(self.contract, self.env, self.object_name))
        self.log.info("%s is %s: age %s s, SLA %s s, latest accepted submission %s (source %s)",
                      record["contract_id"], record["state"], record["age_seconds"], record["sla_seconds"],
                      record["latest_accepted_submission"], record["source"])
        return record
