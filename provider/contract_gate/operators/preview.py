"""The preview of a new contract version as a task before it is deployed: the last accepted
batches re-validated against it (``contract-gate preview``), the task failing when it would have
rejected any."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract_gate.airflow_compat import AirflowFailException
from contract_gate.evolution.preview import accepted_batches, empty_result, judge, render
from contract_gate.operators.base import ContractGateBaseOperator, compile_gate_plan
from contract_gate.operators.branch import decide

if TYPE_CHECKING:
    from airflow.sdk import Context


class ContractPreviewOperator(ContractGateBaseOperator):
    """Re-validate the batches the gate accepted last against a new contract version, writing
    nothing; fail when the new version would publish fewer rows of any of them than the gate
    did (a batch it splits as it was split is no change). Returns the preview (per batch what
    the gate recorded and would decide now, per rule the batches and rows it would have failed;
    counts only).

    The batches come from the decision log and are read from their retained candidates or by
    Delta time travel on the target (``contract_gate_spark.steps.preview``). Spark runs in the task's
    process (a Spark Connect client with ``remote``).

    :param contract: the new contract version's file. (templated)
    :param last: how many of the newest accepted batches to re-validate (default 5). (templated)
    :param deployed: the deployed contract's file, when the new version's target and decision
        log are not its own (a new versioned target); default ``contract``. (templated)
    :param remote: a Spark Connect server (``sc://host:port``) to run on; default
        ``SPARK_REMOTE``, else local Spark in the task's process. (templated)
    """

    template_fields = (*ContractGateBaseOperator.template_fields, "last", "deployed", "remote")
    ui_color = "#f3e8fd"

    def __init__(self, *, last: int | str = 5, deployed: str | None = None, remote: str | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.last = last
        self.deployed = deployed
        self.remote = remote

    def execute(self, context: Context) -> dict[str, Any]:
        last = int(self.last)
        if last < 1:
            raise ValueError(f"last must be 1 or more, not {last}")
        plan = self.load_plan()
        deployed = compile_gate_plan(self.deployed, self.env, self.object_name) if self.deployed else plan
        batches = accepted_batches(deployed, last)
        if not batches:
            self.log.info("no accepted batch of %s to preview %s against", deployed.contract_id, plan.contract_version)
            return empty_result(plan)
        result = judge(plan, self._preview(plan, batches, deployed), batches, decide)
        self.log.info("%s", render(result))
        if result["rejected_batches"]:
            rules = ", ".join(f"{rule['id']} ({rule['batches']} batch(es), {rule['failed_rows']} rows)"
                              for rule in result["rules"])
            raise AirflowFailException(
                f"contract {plan.contract_id} {plan.contract_version} would publish fewer rows than the gate did "
                f"in {result['rejected_batches']} of the last {len(batches)} accepted batch(es): {rules or 'schema'}")
        return result

    def _preview(self, plan, batches: list[dict[str, Any]], deployed) -> dict[str, Any]:
        # pyspark only when the task runs, never while the DAG file is parsed
        from contract_gate.dataframe import spark_session
        from contract_gate_spark.runtime.session import is_connect
        from contract_gate_spark.steps.preview import preview

        spark = spark_session(self.remote)
        try:
            return preview(spark, plan, batches, deployed.require_tables().target)
        finally:
            if is_connect(spark):  # the server keeps a session until it is released
                spark.stop()
