"""The ODCS fields that change nothing the gate does: descriptions, owners, tags, SLA text...

Every field of the two YAML documents is compared, except those the plan is compiled from
(their effect is classified on the plans, ``plan_changes``); what remains is informational.
Lists of named things (schema objects, properties, quality entries, custom properties) are
matched by name, so a property inserted in the middle is one change, not one per property after it.
"""

from __future__ import annotations

from contract_gate.contract.settings import GATE_PROPERTY
from contract_gate.evolution.changes import Change, Impact, shown

# Fields the plan is compiled from, per level of the document; "schema", "properties" and
# "quality" are walked level by level for the fields they hold besides those.
_COMPILED = {
    "contract": {"id", "version", "apiVersion", "kind", "servers", "roles", "schema"},
    "object": {"name", "physicalName", "properties", "quality"},
    "property": {"name", "physicalName", "physicalType", "required", "primaryKey", "primaryKeyPosition", "unique",
                 "logicalTypeOptions", "enum", "quality", "classification", "items", "properties"},
    "quality": {"type", "metric", "rule", "arguments", "unit", "query", "engine", "implementation", "severity", "id",
                "name", "mustBe", "mustNotBe", "mustBeGreaterThan", "mustBeGreaterOrEqualTo", "mustBeLessThan",
                "mustBeLessOrEqualTo", "mustBeBetween", "mustNotBeBetween"},
}
_NESTED = {("contract", "schema"): "object", ("object", "properties"): "property", ("object", "quality"): "quality",
           ("property", "quality"): "quality"}
_IDENTITY_KEYS = ("name", "property", "id", "server", "username", "role", "url", "channel")
# The gate's own custom properties: compiled (the plan's settings, a column's options).
_COMPILED_CUSTOM = {GATE_PROPERTY, "notBlank", "sampleAllowed", "allowNonFinite"}


def field_changes(old: dict, new: dict) -> list[Change]:
    found: list[Change] = []
    _walk_level("contract", old, new, "", None, found)
    return found


def _walk_level(level: str, old: dict, new: dict, path: str, object_name: str | None, found: list[Change]) -> None:
    for key in _ordered_keys(old, new):
        here = f"{path}.{key}" if path else key
        nested = _NESTED.get((level, key))
        if nested:
            _walk_named_list(nested, old.get(key) or [], new.get(key) or [], here, object_name, found)
        elif key == "customProperties":
            _walk_value(_uncompiled(old.get(key)), _uncompiled(new.get(key)), here, object_name, found)
        elif key not in _COMPILED[level]:
            _walk_value(old.get(key), new.get(key), here, object_name, found)


def _walk_named_list(level: str, old: list, new: list, path: str, object_name: str | None, found: list[Change]) -> None:
    key = _identity_key(old + new)
    before, after = _by_identity(old, key), _by_identity(new, key)
    for identity in [*before, *(i for i in after if i not in before)]:
        here = f"{path}[{shown(identity) if isinstance(identity, str) else identity}]"
        name = identity if level == "object" and isinstance(identity, str) else object_name
        a, b = before.get(identity), after.get(identity)
        if isinstance(a, dict) and isinstance(b, dict):
            _walk_level(level, a, b, here, name, found)
        # an added or removed object, property or quality entry is classified on the plans


def _walk_value(old, new, path: str, object_name: str | None, found: list[Change]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in _ordered_keys(old, new):
            _walk_value(old.get(key), new.get(key), f"{path}.{key}", object_name, found)
        return
    identity_key = _identity_key(old + new) if isinstance(old, list) and isinstance(new, list) else None
    if identity_key is not None:
        before, after = _by_identity(old, identity_key), _by_identity(new, identity_key)
        for identity in [*before, *(i for i in after if i not in before)]:
            _walk_value(before.get(identity), after.get(identity), f"{path}[{shown(identity)}]", object_name, found)
        return
    if old is None:
        message = f"added: {shown(new)}"
    elif new is None:
        message = f"removed (was {shown(old)})"
    else:
        message = f"{shown(old)} -> {shown(new)}"
    found.append(Change(Impact.INFORMATIONAL, object_name, path, message))


def _ordered_keys(old: dict, new: dict) -> list[str]:
    return [*old, *(k for k in new if k not in old)]


def _identity_key(items: list) -> str | None:
    """The key every item of a list is named by, if there is one and the names are unique."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for key in _IDENTITY_KEYS:
        if all(isinstance(item.get(key), str) for item in items):
            return key
    return None


def _by_identity(items: list, key: str | None = None) -> dict:
    """Items by their name, or by their position when they have no unique name."""
    key = key or _identity_key(items)
    if key is not None:
        names = [item[key] for item in items]
        if len(set(names)) == len(names):
            return dict(zip(names, items))
    return dict(enumerate(items))


def _uncompiled(items) -> list:
    """The customProperties entries the compiler does not turn into the plan (those are diffed there)."""
    return [i for i in items or [] if not (isinstance(i, dict) and i.get("property") in _COMPILED_CUSTOM)]
