"""Foreign keys (ODCS ``relationships`` of type ``foreignKey``) as ``references`` rules
(``contract_gate_plan.references``): each names the referenced object's published target, so the
Spark side can look the batch's keys up there.

A reference is ``object.property`` (ODCS' shorthand), on a property (``to``) or on the object
(``from`` and ``to``, lists for a composite key). The object is one of this contract's, else one
of the deployment's other contracts (the contract files beside this one), found by its name; a
``contractGate: {contract: <id>}`` entry in the relationship's ``customProperties`` names the
contract when the name alone is ambiguous. The referenced object must be gated (a target the gate
publishes): only such a table can be referenced, never an arbitrary one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from contract_gate.contract.compile_state import CompileState, column_name
from contract_gate.contract.settings import GATE_PROPERTY
from contract_gate_plan import references
from contract_gate_plan.model import Plan

# Compiles a contract file (or the loaded contract itself, for its own objects) without resolving
# its references: a reference needs its target's address, never its target's references.
Compile = Callable[[object], dict[str, Plan] | None]


@dataclass(frozen=True)
class Referenced:
    """The object a reference names: its contract id, its plan (columns and target address)."""

    contract: str
    plan: Plan


class ReferenceCompiler:
    """Relationship entries as ``references`` rules, added to the compile's ``state``."""

    def __init__(self, state: CompileState, compile_other: Compile) -> None:
        self.state = state
        self.compile_other = compile_other

    def compile_relationships(self, obj) -> None:
        for i, prop in enumerate(obj.properties or []):
            for j, relationship in enumerate(prop.relationships or []):
                base = f"{self.state.base}.properties[{i}].relationships[{j}]"
                self.compile_one(relationship, base, [column_name(prop)], relationship.to)
        for j, relationship in enumerate(obj.relationships or []):
            base = f"{self.state.base}.relationships[{j}]"
            sources = relationship.from_ if isinstance(relationship.from_, list) else [relationship.from_]
            columns = [self.own_column(source, f"{base}.from", k) for k, source in enumerate(sources)]
            if None not in columns:
                self.compile_one(relationship, base, [c for c in columns if c is not None], relationship.to)

    def own_column(self, source, base: str, index: int) -> str | None:
        """The column of this object a ``from`` part names (``object.property`` or ``property``)."""
        name = self.state.loaded.object_name(self.state.index)
        text = str(source)
        prop = text[len(name) + 1:] if text.startswith(name + ".") else text
        columns = {self.state.label(c): c for c in self.state.columns}
        if prop not in columns:
            self.state.error(f"{base}[{index}]" if isinstance(index, int) else base,
                             f"from {text!r} is not a property of {name!r}")
            return None
        return columns[prop]

    def compile_one(self, relationship, base: str, columns: list[str], to) -> None:
        if (relationship.type or "foreignKey") != "foreignKey":
            return
        targets = to if isinstance(to, list) else [to]
        if len(targets) != len(columns):
            self.state.error(f"{base}.to", f"{len(columns)} column(s) reference {len(targets)}: a composite key "
                                           "names as many properties on each side")
            return
        objects = {str(t).rsplit(".", 1)[0] for t in targets if "." in str(t)}
        if len(objects) != 1 or any("." not in str(t) for t in targets):
            self.state.error(f"{base}.to", f"a reference is object.property, all parts in one object; got {to!r}")
            return
        object_name = objects.pop()
        contract = self.named_contract(relationship, base)
        referenced = self.find(object_name, contract, f"{base}.to", to)
        if referenced is None:
            return
        labels = {column.label or column.name: column for column in referenced.plan.columns}
        ref_columns = []
        for k, target in enumerate(targets):
            prop = str(target).rsplit(".", 1)[1]
            where = f"{base}.to[{k}]" if isinstance(to, list) else f"{base}.to"
            if prop not in labels:
                self.state.error(where, f"reference {target!r}: {object_name!r} has no property {prop!r}")
                return
            ours, theirs = self.state.columns[columns[k]], labels[prop].type
            if ours != theirs:
                self.state.error(where, f"reference {target!r}: {columns[k]!r} is {ours}, {prop!r} is {theirs}")
                return
            ref_columns.append(labels[prop].name)
        target_table = referenced.plan.document.get("tables", {}) or {}
        rule_id = ".".join(self.state.label(c) for c in columns) + ".references"
        self.state.add_rule(base, rule_id, kind=references.KIND, scope=references.SCOPE, columns=columns,
                            predicate=references.predicate(rule_id, columns),
                            reference={"contract": referenced.contract, "object": object_name,
                                       "columns": ref_columns, "table": target_table["target"]})

    def named_contract(self, relationship, base: str) -> str | None:
        for j, custom in enumerate(relationship.customProperties or []):
            if custom.property == GATE_PROPERTY:
                value = custom.value
                if not isinstance(value, dict) or set(value) != {"contract"} or not isinstance(value["contract"], str):
                    self.state.error(f"{base}.customProperties[{j}].value",
                                     f"a relationship's {GATE_PROPERTY} entry is {{contract: <contract id>}}")
                    return None
                return value["contract"]
        return None

    def find(self, object_name: str, contract: str | None, where: str, to) -> Referenced | None:
        """The gated object ``object_name`` (of ``contract``, when given): this contract's, else
        the one object of that name among the deployment's contracts."""
        loaded = self.state.loaded
        found: list[Referenced] = []
        if contract in (None, loaded.model.id):
            own = self.compile_other(loaded) or {}
            found = [Referenced(loaded.contract_id, own[object_name])] if object_name in own else []
        if not found:
            found = [Referenced(plan.contract_id, plan) for file in self.deployment_files()
                     for name, plan in (self.compile_other(file) or {}).items()
                     if name == object_name and contract in (None, plan.contract_id)]
        who = f"contract {contract!r}" if contract else "this contract or the contracts beside it"
        if not found:
            self.state.error(where, f"reference {to!r} cannot be resolved: no gated object {object_name!r} in {who}")
            return None
        if len(found) > 1:
            self.state.error(where, f"reference {to!r} is ambiguous: contracts {', '.join(r.contract for r in found)} "
                                    f"have a gated object {object_name!r}; name one with {GATE_PROPERTY}: {{contract: ...}}")
            return None
        referenced = found[0]
        if not (referenced.plan.document.get("tables") or {}).get("target"):
            self.state.error(where, f"reference {to!r}: object {object_name!r} publishes no target here")
            return None
        return referenced

    def deployment_files(self) -> list[Path]:
        """The other contract files of the deployment: those beside this one (its folder)."""
        own = Path(self.state.loaded.file)
        if not own.is_file():
            return []
        return [path for path in sorted([*own.parent.glob("*.yaml"), *own.parent.glob("*.yml")])
                if path.resolve() != own.resolve()]
