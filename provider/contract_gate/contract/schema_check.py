"""A fast yes/no check of a document against the bundled ODCS JSON schema.

``jsonschema`` needs 10-15 ms per contract for the ODCS schema (draft 2019-09: its
``unevaluatedProperties`` re-validates every ``allOf``/``if`` branch), which alone is over the
5 ms budget for ``lint`` + ``plan``. Most contracts are valid, so the loader first asks this
checker, compiled once into Python closures, whether the document is valid at all, and only
runs ``jsonschema`` (for its error messages) when the answer is no.

The checker implements exactly the keywords the bundled schema uses, with ``jsonschema``'s
semantics (including how it collects evaluated keys for ``unevaluatedProperties``); a schema
using any other assertion keyword is refused at compile time, so a schema upgrade cannot
silently weaken the check. tests/contracts/test_schema_check.py compares the two on every
contract in the repository and on thousands of mutated documents.
"""

from __future__ import annotations

import re
from typing import Callable

Check = Callable[[object], bool]

# Keywords that only annotate: they never make a document invalid (``format`` included:
# jsonschema does not assert formats unless given a format checker, and the loader gives none).
_ANNOTATIONS = {"$schema", "$defs", "$id", "$comment", "title", "description", "examples", "default",
                "deprecated", "format", "readOnly", "writeOnly", "then", "else"}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    # jsonschema counts 1.0 as an integer.
    "integer": lambda v: _is_number(v) and (isinstance(v, int) or float(v).is_integer()),
}


def _type_check(names: list[str]) -> Check:
    tests = [_TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _all(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def every(value):
        for check in checks:
            if not check(value):
                return False
        return True
    return every


def _equal(a, b) -> bool:
    """JSON equality as jsonschema sees it: ``True`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if _is_number(a) and _is_number(b):
        return a == b
    return type(a) is type(b) and a == b


class SchemaChecker:
    """``SchemaChecker(schema)(document) -> bool``; same verdict as ``jsonschema``'s ``is_valid``."""

    def __init__(self, root: dict):
        self.root = root
        self._compiled: dict[int, Check] = {}
        self._check = self.compile(root)

    def __call__(self, document) -> bool:
        return self._check(document)

    # -- compiling ----------------------------------------------------------------------
    def compile(self, schema) -> Check:
        if schema is True:
            return lambda _: True
        if schema is False:
            return lambda _: False
        key = id(schema)
        if key not in self._compiled:
            # Placeholder first: a schema may reach itself through $ref.
            self._compiled[key] = lambda value: self._compiled[key](value)
            self._compiled[key] = self._build(schema)
        return self._compiled[key]

    def resolve(self, ref: str) -> dict:
        if not ref.startswith("#/"):
            raise ValueError(f"unsupported $ref {ref!r}")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _build(self, schema: dict) -> Check:
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS:
                continue
            builder = getattr(self, "_kw_" + keyword.lstrip("$"), None)
            if builder is None:
                raise ValueError(f"schema keyword {keyword!r} is not supported by the fast check")
            checks.append(builder(value, schema))
        return _all(checks)

    # -- keywords (each returns a check; all follow jsonschema's draft 2019-09 rules) ---------
    def _kw_ref(self, ref, _schema):
        target = self.resolve(ref)
        return lambda value: self.compile(target)(value)

    def _kw_type(self, types, _schema):
        return _type_check([types] if isinstance(types, str) else types)

    def _kw_const(self, const, _schema):
        if type(const) is str:
            return lambda value: type(value) is str and value == const
        return lambda value: _equal(value, const)

    def _kw_enum(self, options, _schema):
        if all(type(option) is str for option in options):
            allowed = frozenset(options)
            return lambda value: type(value) is str and value in allowed
        return lambda value: any(_equal(value, option) for option in options)

    def _kw_pattern(self, pattern, _schema):
        regex = re.compile(pattern)
        return lambda value: not isinstance(value, str) or regex.search(value) is not None

    def _kw_minimum(self, limit, _schema):
        return lambda value: not _is_number(value) or value >= limit

    def _kw_exclusiveMinimum(self, limit, _schema):
        return lambda value: not _is_number(value) or value > limit

    def _kw_minItems(self, limit, _schema):
        return lambda value: not isinstance(value, list) or len(value) >= limit

    def _kw_maxItems(self, limit, _schema):
        return lambda value: not isinstance(value, list) or len(value) <= limit

    def _kw_uniqueItems(self, unique, _schema):
        if not unique:
            return lambda value: True

        def check(value):
            if not isinstance(value, list):
                return True
            return all(not _equal(a, b) for i, a in enumerate(value) for b in value[i + 1:])
        return check

    def _kw_required(self, names, _schema):
        return lambda value: not isinstance(value, dict) or all(name in value for name in names)

    def _kw_properties(self, properties, _schema):
        compiled = {name: self.compile(sub) for name, sub in properties.items()}

        def check(value):
            if isinstance(value, dict):
                for name, item in value.items():
                    sub = compiled.get(name)
                    if sub is not None and not sub(item):
                        return False
            return True
        return check

    def _kw_additionalProperties(self, additional, schema):
        declared = set(schema.get("properties", {}))
        if schema.get("patternProperties"):
            raise ValueError("patternProperties is not supported by the fast check")
        sub = self.compile(additional)

        def check(value):
            if not isinstance(value, dict):
                return True
            return all(sub(item) for name, item in value.items() if name not in declared)
        return check

    def _kw_items(self, items, _schema):
        if isinstance(items, list):
            raise ValueError("tuple-form items is not supported by the fast check")
        sub = self.compile(items)

        def check(value):
            if isinstance(value, list):
                for item in value:
                    if not sub(item):
                        return False
            return True
        return check

    def _kw_allOf(self, subschemas, _schema):
        plain, switches = _split_switches(subschemas)
        subs = [self.compile(s) for s in plain]
        for key, branches in switches.items():
            subs.append(self._switch(key, branches, lambda then: self.compile(then),
                                     lambda checks, value: _all(checks)(value), True))
        return _all(subs)

    @staticmethod
    def _switch(key, branches, prepare, combine, empty):
        """Dispatch on ``value[key]`` for a run of ``if: {properties: {key: {const: c}}}, then: T``
        branches (ODCS picks the server type's and the logical type's rules this way): one dict
        lookup instead of testing every ``if``. ``combine(items, value)`` folds the prepared
        ``then`` parts that apply; ``empty`` is the result when none does."""
        by_const: dict[str, list] = {}
        when_missing, always = [], []  # an ``if`` without ``required`` also holds when key is absent
        for const, required, then in branches:
            item = prepare(then)
            by_const.setdefault(const, []).append(item)
            if not required:
                when_missing.append(item)
            always.append(item)

        def switch(value):
            if not isinstance(value, dict):
                items = always  # every ``if`` holds vacuously for a non-object
            elif key not in value:
                items = when_missing
            else:
                found = value[key]
                items = by_const.get(found, ()) if isinstance(found, str) else ()
            return combine(items, value) if items else empty
        return switch

    def _kw_anyOf(self, subschemas, _schema):
        if all(isinstance(s, dict) and set(s) == {"type"} and isinstance(s["type"], str) for s in subschemas):
            return _type_check([s["type"] for s in subschemas])  # ODCS's AnyType: one type test
        subs = [self.compile(s) for s in subschemas]
        return lambda value: any(sub(value) for sub in subs)

    def _kw_oneOf(self, subschemas, _schema):
        subs = [self.compile(s) for s in subschemas]
        return lambda value: sum(1 for sub in subs if sub(value)) == 1

    def _kw_not(self, subschema, _schema):
        sub = self.compile(subschema)
        return lambda value: not sub(value)

    def _kw_if(self, condition, schema):
        test = self.compile(condition)
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda value: then(value) if test(value) else otherwise(value)

    def _kw_unevaluatedProperties(self, unevaluated, schema):
        sub = self.compile(unevaluated)
        evaluated = self._evaluated(schema)
        fixed = self._key_sources(schema)[0]

        def check(value):
            if not isinstance(value, dict):
                return True
            if fixed is not _ALL and all(name in fixed for name in value):
                return True  # every key is declared unconditionally: no branch needs testing
            keys = evaluated(value)
            return keys is _ALL or all(sub(item) for name, item in value.items() if name not in keys)
        return check

    # -- annotation collection, as jsonschema's find_evaluated_property_keys_by_schema ---------
    def _evaluated(self, schema) -> Callable[[dict], set]:
        """A function giving the keys of an object that ``schema`` evaluates.

        Keys from ``properties`` and from ``$ref``/``allOf`` are fixed: jsonschema only drops an
        ``allOf`` branch's keys when that branch is invalid, and then the document is invalid
        anyway, so the verdict is the same. Only ``anyOf``/``oneOf``/``if`` depend on the value."""
        fixed, dynamic = self._key_sources(schema)
        if fixed is _ALL:
            return lambda value: _ALL
        if not dynamic:
            return lambda value: fixed

        def evaluated(value):
            keys = set(fixed)
            for source in dynamic:
                found = source(value)
                if found is _ALL:
                    return _ALL
                keys |= found
            return keys
        return evaluated

    def _key_sources(self, schema):
        if not isinstance(schema, dict):
            return frozenset(), []
        fixed: set = set()
        dynamic: list = []
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            declared = schema.get(keyword)
            if declared is True:
                return _ALL, []
            if isinstance(declared, dict):
                fixed |= set(declared)
        plain, switches = _split_switches(schema.get("allOf", ()))
        unconditional = list(plain)
        for key, branches in switches.items():
            dynamic.append(self._switch(key, branches, lambda then: self._evaluated(then),
                                        _union_all, frozenset()))
        if "$ref" in schema:
            unconditional.append(self.resolve(schema["$ref"]))
        for sub in unconditional:
            sub_fixed, sub_dynamic = self._key_sources(sub)
            if sub_fixed is _ALL:
                return _ALL, []
            fixed |= sub_fixed
            dynamic += sub_dynamic
        for sub in [*schema.get("anyOf", ()), *schema.get("oneOf", ())]:
            dynamic.append(self._branch(self.compile(sub), self._evaluated(sub)))
        if "if" in schema:
            test = self.compile(schema["if"])
            when_true = self._union(self._evaluated(schema["if"]), self._evaluated(schema.get("then")))
            when_false = self._evaluated(schema.get("else"))
            dynamic.append(lambda value: when_true(value) if test(value) else when_false(value))
        return frozenset(fixed), dynamic

    @staticmethod
    def _branch(valid: Check, evaluated):
        return lambda value: evaluated(value) if valid(value) else frozenset()

    @staticmethod
    def _union(first, second):
        def union(value):
            a, b = first(value), second(value)
            return _ALL if (a is _ALL or b is _ALL) else a | b
        return union


_ALL = frozenset({object()})  # marker: every key is evaluated


def _union_all(sources, value):
    keys: set = set()
    for source in sources:
        found = source(value)
        if found is _ALL:
            return _ALL
        keys |= found
    return keys


def _discriminator(schema):
    """(key, const, required) when ``schema`` is exactly ``if: {properties: {key: {const: "c"}}
    [, required: [key]]}, then: ...``; else None."""
    if not isinstance(schema, dict) or set(schema) != {"if", "then"}:
        return None
    condition = schema["if"]
    if not isinstance(condition, dict) or not set(condition) <= {"properties", "required"}:
        return None
    properties = condition.get("properties")
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    (key, test), = properties.items()
    if not isinstance(test, dict) or set(test) != {"const"} or not isinstance(test["const"], str):
        return None
    required = condition.get("required", [])
    if required not in ([], [key]):
        return None
    return key, test["const"], bool(required)


def _split_switches(subschemas):
    """Split ``allOf`` items into plain subschemas and discriminated ``if``/``then`` branches by key."""
    plain, switches = [], {}
    for sub in subschemas:
        found = _discriminator(sub)
        if found is None:
            plain.append(sub)
        else:
            key, const, required = found
            switches.setdefault(key, []).append((const, required, sub["then"]))
    return plain, switches
