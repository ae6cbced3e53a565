"""Compile a loaded ODCS contract into a ValidationPlan (see docs/plan-format.md).

The plan is deterministic: the same contract and environment give byte-identical JSON
(``contract_gate_plan.document.render_plan``) and the same ``fingerprint``. Every problem found is collected and
raised together as one :class:`ContractError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contract_gate.contract.compile_columns import ColumnCompiler
from contract_gate.contract.compile_quality import QualityCompiler
from contract_gate.contract.compile_references import ReferenceCompiler
from contract_gate.contract.compile_rules import PropertyRuleCompiler
from contract_gate.contract.compile_settings import SettingsCompiler
from contract_gate.contract.compile_state import CompileState
from contract_gate.contract.errors import ContractError, ContractIssue
from contract_gate.contract.loader import LoadedContract, load_contract
from contract_gate_plan.document import PLAN_VERSION, fingerprint
from contract_gate_plan.model import Plan, compiled_plan
from contract_gate_plan.names import gate_names

# Characters Delta refuses in column names unless column mapping is on.
_DELTA_RESERVED_NAME_CHARS = set(" ,;{}()\n\t=")


@dataclass(frozen=True)
class CompiledContract:
    """A contract compiled object by object: one plan per schema object (in contract order),
    for the objects that are documentation only, why they are not gated, and what the gate
    accepted but a reader should know (a severity word it does not know, a type it fell back on)."""

    loaded: LoadedContract
    plans: dict[str, Plan]
    not_gated: dict[str, str]
    warnings: tuple[ContractIssue, ...] = ()

    @property
    def gated(self) -> dict[str, Plan]:
        """The plans of the objects the gate guards (a landing and tables on the server)."""
        return {name: plan for name, plan in self.plans.items() if name not in self.not_gated}

    def plan(self, object_name: str | None = None) -> Plan:
        """The plan of ``object_name``; without one, of the contract's only object, else of its only
        gated object. Raises :class:`ContractError` naming the objects to choose from."""
        if object_name is not None:
            if object_name not in self.plans:
                raise ContractError(self.loaded.file, [self.loaded.issue(
                    "schema", f"no schema object {object_name!r}; the contract has {_listing(self.plans)}")])
            return self.plans[object_name]
        if len(self.plans) == 1:
            return next(iter(self.plans.values()))
        if len(self.gated) == 1:
            return next(iter(self.gated.values()))
        raise ContractError(self.loaded.file, [self.loaded.issue(
            "schema", f"the contract has {len(self.plans)} schema objects ({_listing(self.plans)}): name one with "
            "--object NAME (object_name= in Python)")])


def compile_plans(contract: str | Path | LoadedContract, env: str | None = None, *,
                  references: bool = True) -> CompiledContract:
    """Load (if given a path) and compile every schema object of a contract. Every problem of
    every object is raised together as one :class:`ContractError`. ``references=False`` leaves
    out its foreign keys (what a reference to one of its objects needs is its target only)."""
    loaded = contract if isinstance(contract, LoadedContract) else load_contract(contract)
    referenced = _ReferencedPlans(env) if references else None
    objects = loaded.model.schema_ or []
    if not objects:
        raise ContractError(loaded.file, [loaded.issue("schema", "the contract has no schema object: nothing to gate")])
    issues: list[ContractIssue] = []
    plans: dict[str, Plan] = {}
    not_gated: dict[str, str] = {}
    warnings: list[ContractIssue] = []
    for index in range(len(objects)):
        name = loaded.object_name(index)
        compiler = _Compiler(loaded, env, index, referenced)
        if name in plans:
            issues.append(loaded.issue(f"schema[{index}].name", f"duplicate schema object name {name!r}"))
            continue
        try:
            plans[name] = compiled_plan(compiler.compile())
        except ContractError as exc:
            issues.extend(exc.issues)
            continue
        warnings.extend(compiler.state.warnings)
        if compiler.state.not_gated:
            not_gated[name] = compiler.state.not_gated
    if issues:
        raise ContractError(loaded.file, sorted(set(issues), key=_by_line))
    return CompiledContract(loaded, plans, not_gated, tuple(sorted(set(warnings), key=_by_line)))


def compile_plan(contract: str | Path | LoadedContract, env: str | None = None, object_name: str | None = None) -> Plan:
    """The plan of one schema object (see :meth:`CompiledContract.plan`). Raises :class:`ContractError`."""
    return compile_plans(contract, env).plan(object_name)


class _ReferencedPlans:
    """The gated plans of the contracts a compile's references name, each compiled once and
    without its own references; None for a contract that does not compile (its own lint says why)."""

    def __init__(self, env: str | None) -> None:
        self.env = env
        self.compiled: dict[str, dict[str, Plan] | None] = {}

    def __call__(self, source: object) -> dict[str, Plan] | None:
        key = source.file if isinstance(source, LoadedContract) else str(source)
        if key not in self.compiled:
            try:
                contract = source if isinstance(source, LoadedContract) else Path(str(source))
                self.compiled[key] = compile_plans(contract, self.env, references=False).gated
            except ContractError:
                self.compiled[key] = None
        return self.compiled[key]


def _by_line(issue: ContractIssue) -> tuple:
    return issue.line or 0, issue.path, issue.message


def _listing(plans: dict) -> str:
    return ", ".join(repr(name) for name in plans)


class _Compiler:
    """Compiles schema object ``index`` of a contract into its plan, part by part: columns, gate
    settings, property rules, quality entries, each adding to the one ``state`` they share."""

    def __init__(self, loaded: LoadedContract, env: str | None, index: int,
                 referenced: _ReferencedPlans | None) -> None:
        self.state = state = CompileState(loaded, env, index)
        self.reference_compiler = ReferenceCompiler(state, referenced) if referenced is not None else None
        self.column_compiler = ColumnCompiler(state)
        self.quality_compiler = QualityCompiler(state)
        self.rule_compiler = PropertyRuleCompiler(state, self.column_compiler, self.quality_compiler)
        self.settings_compiler = SettingsCompiler(state)

    def compile(self) -> dict:
        """The plan document (docs/plan-format.md) of the object, with its fingerprint."""
        state = self.state
        model = state.loaded.model
        objects = state.objects
        obj = objects[state.index]
        name = state.loaded.object_name(state.index)
        state.server_type = self.settings_compiler.chosen_server_type()
        columns = self.column_compiler.compile_columns(obj)
        state.key = self.column_compiler.compile_key(obj)
        # before the rules: queries may use its references
        settings = state.settings = self.settings_compiler.gate_settings(obj)
        self.rule_compiler.compile_property_rules(obj)
        if self.reference_compiler is not None and state.settings is not None:  # a gated object's batch
            self.reference_compiler.compile_relationships(obj)
        self.quality_compiler.compile_quality(obj.quality or [], state.base, column=None)
        server = self.settings_compiler.pick_server()
        freshness = self.settings_compiler.freshness(name)
        tables = self.settings_compiler.table_addresses(settings, server, name) if settings else None
        access = self.settings_compiler.access(server) if settings else None
        plan_rules = state.assign_ids()
        if state.issues:
            raise ContractError(state.loaded.file, sorted(state.issues, key=lambda i: (i.line or 0, i.path, i.message)))
        environment = server.server if server is not None else None
        document = {
            "plan_version": PLAN_VERSION,
            "contract": {"id": model.id, "version": model.version, "name": model.name, "domain": model.domain},
            "object": name,
            "names": gate_names(state.loaded.contract_id, name, len(objects), environment),
            "environment": environment,
            "columns": columns,
            "key": state.key,
            "rules": plan_rules,
            "schema_policy": settings.schema_policy if settings else "strict",
            "delta_column_mapping": any(set(name) & _DELTA_RESERVED_NAME_CHARS
                                        for name in (*state.columns, *state.field_names)),
            "freshness": freshness,
            "gate": settings.model_dump(mode="json", by_alias=True) if settings else None,
            "tables": tables,
            **({"access": access} if access else {}),
        }
        document["fingerprint"] = fingerprint(document)
        return document
