"""The gate's Airflow tasks, one operator per step: submission, stage and validate, branch,
publish, quarantine, split, record the decision, retention, and the freshness check; and the
preview of a new contract version before it is deployed (``ContractPreviewOperator``)
(``contract_gate.task_group`` wires the gate's steps into one group; the runners decide where
their Spark runs)::

    from contract_gate.operators import GateValidateOperator, FreshnessCheckOperator

Importing this package imports neither pyspark nor the Delta readers (each task imports what it
needs when it runs), so DAG files may import it freely.
"""

from contract_gate.operators.audit import GateAuditOperator
from contract_gate.operators.base import ContractGateBaseOperator, SparkGateOperator
from contract_gate.operators.branch import GateBranchOperator
from contract_gate.operators.freshness import FreshnessCheckOperator
from contract_gate.operators.preview import ContractPreviewOperator
from contract_gate.operators.publish import GatePublishOperator
from contract_gate.operators.quarantine import GateQuarantineOperator
from contract_gate.operators.record import GateRecordDecisionOperator
from contract_gate.operators.retention import GateRetentionOperator
from contract_gate.operators.split import GateSplitOperator
from contract_gate.operators.submission import GateSubmissionOperator
from contract_gate.operators.validate import GateValidateOperator

__all__ = [
    "ContractGateBaseOperator",
    "ContractPreviewOperator",
    "FreshnessCheckOperator",
    "GateAuditOperator",
    "GateBranchOperator",
    "GatePublishOperator",
    "GateQuarantineOperator",
    "GateRecordDecisionOperator",
    "GateRetentionOperator",
    "GateSplitOperator",
    "GateSubmissionOperator",
    "GateValidateOperator",
    "SparkGateOperator",
]
