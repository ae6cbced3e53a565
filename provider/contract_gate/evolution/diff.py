"""``diff_contracts``: every change between two versions of a contract, classified, per schema object."""

from __future__ import annotations

from dataclasses import dataclass

from contract_gate.contract.loader import LoadedContract
from contract_gate.evolution.changes import IMPACT_ORDER, Change, Impact, shown
from contract_gate.evolution.field_changes import field_changes
from contract_gate.evolution.plan_changes import plan_changes
from contract_gate.evolution.sources import compiled_objects
from contract_gate.evolution.versions import bump_problems


class UnknownObject(ValueError):
    """The object to diff is in neither version."""


@dataclass(frozen=True)
class Side:
    file: str
    id: str
    version: str

    def as_json(self) -> dict:
        return {"file": self.file, "id": self.id, "version": self.version}


@dataclass(frozen=True)
class ContractDiff:
    old: Side
    new: Side
    changes: tuple[Change, ...]
    version_problems: tuple[str, ...]

    @property
    def breaking(self) -> bool:
        return any(change.impact is Impact.BREAKING for change in self.changes)

    def counts(self) -> dict[str, int]:
        return {impact.value: sum(c.impact is impact for c in self.changes) for impact in IMPACT_ORDER}

    def as_json(self) -> dict:
        return {"old": self.old.as_json(), "new": self.new.as_json(), "breaking": self.breaking,
                "counts": self.counts(), "changes": [change.as_json() for change in self.changes],
                "version_problems": list(self.version_problems)}


def diff_contracts(old: LoadedContract, new: LoadedContract, env: str | None = None,
                   object_name: str | None = None) -> ContractDiff:
    """Every object's changes, or only ``object_name``'s (and the contract's own). Raises
    ``ContractError`` when either version does not compile, :class:`UnknownObject` when neither has
    ``object_name``."""
    old_plans, new_plans = compiled_objects(old, env), compiled_objects(new, env)
    if object_name is not None:
        if object_name not in old_plans and object_name not in new_plans:
            names = ", ".join(repr(n) for n in dict.fromkeys([*old_plans, *new_plans]))
            raise UnknownObject(f"no schema object {object_name!r} in either version; they have {names}")
        old_plans = {n: p for n, p in old_plans.items() if n == object_name}
        new_plans = {n: p for n, p in new_plans.items() if n == object_name}
    changes: list[Change] = []
    if old.model.id != new.model.id:
        changes.append(Change(Impact.BREAKING, None, "id", f"{shown(old.model.id)} -> {shown(new.model.id)}: "
                                                           "another contract, with another gate and tables"))
    for name in [*old_plans, *(n for n in new_plans if n not in old_plans)]:
        if name not in new_plans:
            changes.append(Change(Impact.BREAKING, name, "object", "removed: its dataset is no longer gated"))
        elif name not in old_plans:
            changes.append(Change(Impact.NON_BREAKING, name, "object", "added: a new dataset is gated"))
        else:
            changes += plan_changes(name, old_plans[name].document, new_plans[name].document)
    changes += [c for c in field_changes(old.raw, new.raw) if object_name is None or c.object in (None, object_name)]
    ordered = sorted(changes, key=lambda c: IMPACT_ORDER.index(c.impact))  # stable: document order within a class
    breaking = any(c.impact is Impact.BREAKING for c in ordered)
    problems = bump_problems(old.version, new.version, bool(ordered), breaking)
    return ContractDiff(Side(old.file, old.contract_id, old.version), Side(new.file, new.contract_id, new.version),
                        tuple(ordered), tuple(problems))
