"""Tables claimed by two contracts of one folder: refused by ``lint <folder>`` and the DAG factory.

Each contract claims places (its compiled plan's addresses, see ``table_locations``):

* its own, never shared: the **target**, the **quarantine**, and its **candidates** (the
  ``<object>__*`` tables of its candidate folder), and its contract **id**;
* shared by the contracts of a deployment: the **decision table** and the **candidate folder**;
* read only: the **landing** and each query **reference**.

Two contracts conflict when an own table of one is the same as, or lies inside, an own or shared
table of the other (a copy of ``orders`` that only changes ``id`` claims the orders target; a
contract whose quarantine is the orders target claims it too), when they have the same
candidates or the same id, or when one's landing or query reference reads the other's quarantine,
candidates or decisions (a query over another team's quarantine measures its values: a count per
guess is an oracle). Both files get an error naming the other file and the YAML path of its claim.

At run time every write step checks the table's ownership properties as well
(``contract_gate_plan.ownership``): this check finds the clash before anything runs, that one stops a
contract that was never linted with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from contract_gate.contract.errors import ContractIssue
from contract_gate.contract.loader import LoadedContract
from contract_gate.contract.table_locations import canonical, table_sources
from contract_gate_plan.addresses import Address, candidate_schema
from contract_gate_plan.model import Plan

OWN = ("target", "quarantine")
SHARED = ("decisions", "candidate_schema")
_NAMES = {"candidate_schema": "candidate folder", "dag_id": "derived DAG id"}


@dataclass(frozen=True, eq=False)  # compared by identity: one claim of one contract
class Claim:
    contract: LoadedContract
    role: str  # target, quarantine, decisions, candidate_schema, landing, reference, candidates, id, dag_id
    yaml_path: str
    kind: str  # path | table | key
    key: str
    shown: str

    @property
    def what(self) -> str:
        return _NAMES.get(self.role, self.role)


def claims_of(loaded: LoadedContract, plan: Plan) -> list[Claim]:
    """Everything ``plan`` (compiled from ``loaded``) claims: its places shown as the contract wrote them."""
    contract_id, dag_id = plan.contract_id, plan.names.dag_id
    found = [Claim(loaded, "id", "id", "key", str(contract_id).casefold(), contract_id)]
    if dag_id != contract_id:  # an id that fits is its own DAG id, claimed above (so in the same key space)
        found.append(Claim(loaded, "dag_id", "id", "key", dag_id.casefold(), dag_id))
    if not plan.gated:
        return found
    written = {role: Address.as_written(plan.document["tables"][role]) for role in ("landing", *OWN, *SHARED)}
    sources = table_sources(loaded.raw)
    for role in ("landing", *OWN, *SHARED):
        address = candidate_schema(written[role]) if role == "candidate_schema" else written[role]
        found.append(Claim(loaded, role, sources[role], address.kind, canonical(address), address.location))
    for alias, document in sorted((plan.document["tables"].get("references") or {}).items()):
        address = Address.as_written(document)
        found.append(Claim(loaded, "reference", sources.get(f"references.{alias}", "customProperties"), address.kind,
                           canonical(address), address.location))
    folder = candidate_schema(written["candidate_schema"])
    found.append(Claim(loaded, "candidates", sources["candidate_schema"], "key",
                       f"{canonical(folder)}/{plan.object.lower()}__", f"{folder.location}/{plan.object}__*"))
    return found


def _clash(first: Claim, second: Claim) -> bool:
    """Whether two claims of different contracts on the same (or nested) place conflict."""
    roles = {first.role, second.role}
    if roles in ({"id"}, {"dag_id"}, {"id", "dag_id"}, {"candidates"}):
        return True
    if roles & {"landing", "reference"}:  # reading another contract's published target is a pipeline, not a clash
        return bool(roles & {"quarantine", *SHARED})
    if roles & set(OWN):
        return True
    return len(roles) == 2  # one decision table or candidate folder is meant to be shared by all


def conflicts(contracts: list[tuple[LoadedContract, Plan]]) -> dict[str, list[ContractIssue]]:
    """file -> the issues of its claims that clash with another contract's (files without a
    clash are left out). Paths are compared resolved, with nesting; names case-insensitively."""
    by_place: dict[tuple[str, str], list[Claim]] = {}
    for loaded, plan in contracts:
        for claim in claims_of(loaded, plan):
            by_place.setdefault((claim.kind, claim.key), []).append(claim)
    pairs: set[tuple[Claim, Claim]] = set()
    for (kind, key), claims in by_place.items():
        places = [key, *_ancestors(key, "/" if kind == "path" else ".")]
        others = [c for place in places for c in by_place.get((kind, place), [])]
        for claim in claims:
            for other in others:
                if other.contract.file != claim.contract.file and _clash(claim, other):
                    pairs.add((claim, other))
                    pairs.add((other, claim))
    issues: dict[str, set[ContractIssue]] = {}
    for claim, other in pairs:
        where = other.yaml_path or "<document>"
        line = other.contract.source.line_of(other.yaml_path) if other.yaml_path else None
        place = "" if other.shown == claim.shown else f" {other.shown}"
        message = (f"the {claim.what} {claim.shown} is also claimed by {other.contract.file} ({where}"
                   f"{f', line {line}' if line else ''}) as its {other.what}{place}: two contracts may not share "
                   "a table or an id, nor put a table inside another's")
        issues.setdefault(claim.contract.file, set()).add(claim.contract.issue(claim.yaml_path, message))
    return {file: sorted(found, key=lambda i: (i.line or 0, i.path, i.message)) for file, found in issues.items()}


def _ancestors(key: str, separator: str) -> list[str]:
    """Every place above ``key``: folders of a path (``/a/b/c`` -> ``/a/b``, ``/a``), the schema
    and catalog of a table name (``c.s.t`` -> ``c.s``, ``c``)."""
    parts = key.rstrip(separator).split(separator)
    above = (separator.join(parts[:n]) for n in range(len(parts) - 1, 0, -1))
    return [place for place in above if place.strip(separator)]
