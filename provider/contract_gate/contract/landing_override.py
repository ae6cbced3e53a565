"""Where a run's landing override may be read: where the contract's own landing could be.

A gate run may read its batch from another path than the contract's landing (the DAG's
``landing`` param, ``contract-gate run --landing``): a corrected batch, a test file. Whoever may
trigger the gate DAG sets it, and the batch is read with the worker's rights into a candidate
and a quarantine the contract's owners may read. Unbounded, triggering a team's own DAG would
read any file the worker can (its configuration, another team's landing). So an override is held
to the bounds of a contract's landing (:mod:`contract_gate.contract.table_locations`: under the
server's root or ``[contract_gate] landing_roots``, no ``..``, no glob character, no link out) and,
where teams share the gate, to the reads of the contract file's team
(:mod:`contract_gate.contract.tenancy`).
"""

from __future__ import annotations

from pathlib import Path

from contract_gate.contract.environments import DEFAULT_ROOT, select_server
from contract_gate.contract.loader import load_contract
from contract_gate.contract.table_locations import landing_problem
from contract_gate.contract.tenancy import tenant_of
from contract_gate_plan.addresses import Address


def landing_override_problem(contract: Path, env: str | None, path: str) -> str | None:
    """Why the landing override ``path`` of a run of ``contract`` (in environment ``env``) may
    not be read; None when it may."""
    server = select_server(load_contract(contract).model.servers or [], env)
    root = server.path if server is not None and server.path else DEFAULT_ROOT
    address = Address.as_written({"kind": "path", "path": path})
    problem = landing_problem(address, path, root)
    if problem:
        return problem
    tenant = tenant_of(contract.name)
    return tenant.read_refusal(address) if tenant is not None else None
