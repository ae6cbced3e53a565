"""Load an ODCS v3 contract: YAML -> JSON-schema check -> typed model.

The raw document is checked against the JSON schema that ``open-data-contract-standard``
ships *before* the pydantic model is built, because the model silently drops unknown nested
keys. The check is ``jsonschema-rs``: on this draft 2019-09 schema the pure-Python
``jsonschema`` alone costs more than a whole ``lint`` + ``plan`` may. Every error is
collected with its YAML path and line, worded the way the project's other errors are (values
in Python notation, every allowed value listed).

A contract is untrusted input: a file larger than :data:`MAX_CONTRACT_BYTES` is refused before
it is parsed, and parsing itself is bounded (``contract_gate.contract.yaml_source``).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jsonschema_rs
from jsonschema_rs import ValidationErrorKind as Kind
from open_data_contract_standard.model import OpenDataContractStandard

from contract_gate.contract.errors import ContractError, ContractIssue, yaml_path
from contract_gate.contract.yaml_source import YamlDocument, YamlSyntaxError, parse_yaml

SUPPORTED_API_VERSIONS = ("v3.0.0", "v3.0.1", "v3.0.2", "v3.1.0", "v3.2.0")
MAX_CONTRACT_BYTES = 1024 * 1024
"""The largest contract file read (1 MiB); the contract benchmark's largest is about 15 KiB."""


@dataclass
class LoadedContract:
    file: str
    raw: dict
    model: OpenDataContractStandard
    source: YamlDocument

    def issue(self, path: str, message: str) -> ContractIssue:
        return ContractIssue(self.file, self.source.line_of(path), path, message)

    @property
    def contract_id(self) -> str:
        return self._required(self.model.id, "", "id")

    @property
    def version(self) -> str:
        return self._required(self.model.version, "", "version")

    def object_name(self, index: int) -> str:
        """The ``name`` of schema object ``index``."""
        return self._required((self.model.schema_ or [])[index].name, f"schema[{index}]", "name")

    def _required(self, value: str | None, path: str, key: str) -> str:
        """A value the ODCS schema requires: loading refuses a contract without it, so None is a bug here."""
        if value is None:
            raise ContractError(self.file, [self.issue(path, f"{key!r} is a required property")])
        return value


@functools.cache
def _schema() -> dict:
    return json.loads(resources.files("open_data_contract_standard").joinpath("schema.json").read_text("utf-8"))


@functools.cache
def _validator() -> jsonschema_rs.Validator:
    # Formats are annotations here (as in draft 2019-09 by default): asserting them would
    # refuse contracts that ODCS itself accepts.
    return jsonschema_rs.validator_for(_schema(), validate_formats=False)


def load_contract(path: str | Path) -> LoadedContract:
    """Read and check one contract file; raise :class:`ContractError` with every issue found."""
    file = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONTRACT_BYTES + 1)  # never more: the file may be endless
        _check_size(len(data), file)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(file, [ContractIssue(file, None, "", f"cannot read file: {exc}")]) from exc
    return load_contract_text(text, file)


def _check_size(size: int, file: str) -> None:
    if size > MAX_CONTRACT_BYTES:
        raise ContractError(file, [ContractIssue(file, None, "", f"the file is larger than {MAX_CONTRACT_BYTES:,} "
                                                                 "bytes, the limit for a contract")])


def load_contract_text(text: str, file: str = "<string>") -> LoadedContract:
    if len(text) > MAX_CONTRACT_BYTES // 4:  # a str of n characters is at most 4n UTF-8 bytes
        _check_size(len(text.encode("utf-8")), file)
    try:
        source = parse_yaml(text)
    except YamlSyntaxError as exc:
        raise ContractError(file, [ContractIssue(file, exc.line, exc.path, str(exc))]) from exc
    issues = [ContractIssue(file, line, path, "duplicate key") for path, line in source.duplicates]
    if not isinstance(source.data, dict):
        issues.append(ContractIssue(file, 1, "", "a contract must be a YAML mapping"))
        raise ContractError(file, issues)
    api_version = source.data.get("apiVersion")
    if api_version not in SUPPORTED_API_VERSIONS:
        issues.append(ContractIssue(file, source.line_of("apiVersion"), "apiVersion",
                                    f"unsupported apiVersion {api_version!r}; supported: {', '.join(SUPPORTED_API_VERSIONS)}"))
        raise ContractError(file, issues)
    issues += _schema_issues(source, file)
    if issues:
        raise ContractError(file, sorted(issues, key=_issue_order))
    model = OpenDataContractStandard.model_validate(source.data)
    return LoadedContract(file=file, raw=source.data, model=model, source=source)


def _issue_order(issue: ContractIssue):
    return (issue.line or 0, issue.path, issue.message)


def _schema_issues(source: YamlDocument, file: str) -> list[ContractIssue]:
    try:
        errors = list(_validator().iter_errors(source.data))
    except ValueError:  # the library takes JSON only; name what is not JSON instead of crashing
        found = [ContractIssue(file, source.line_of(yaml_path(parts)), yaml_path(parts), message)
                 for parts, message in _not_json(source.data, [])]
        if not found:
            raise
        return found
    structural: set[ContractIssue] = set()
    unknown_keys: set[ContractIssue] = set()
    for error in errors:
        for parts, message, is_unknown_key in _describe(error):
            path = yaml_path(parts)
            issue = ContractIssue(file, source.line_of(path), path, message)
            (unknown_keys if is_unknown_key else structural).add(issue)
    # When a branch of an if/then fails, JSON schema also calls that branch's keys
    # "unevaluated"; those are echoes of the real error on the same object or on one of its
    # keys, not unknown keys. (A real unknown key next to such an error shows once it is fixed.)
    failed = {issue.path for issue in structural} | {_parent(issue.path) for issue in structural}
    unknown_keys = {i for i in unknown_keys if _parent(i.path) not in failed}
    return list(structural | unknown_keys)


def _not_json(node, parts: list):
    """Yield (path parts, message) for each key that is not text (``7:``, ``true:``, ``~:``)
    and each value that JSON has no type for (``!!binary``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                yield from _not_json(value, [*parts, key])
            else:
                yield [*parts, str(key)], f"a key must be text, got {key!r}: quote it"
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _not_json(value, [*parts, index])
    elif not isinstance(node, (str, int, float, bool, type(None))):
        yield parts, f"a {type(node).__name__} value (a YAML tag such as !!binary) is not allowed: use text, a number, true/false or null"


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


# YAML 1.1 needs a dot in a float: 1e5 is the string "1e5", 1.0e+5 the number.
_YAML_EXPONENT = re.compile(r"[-+]?\d+[eE][-+]?\d+")


def _describe(error: jsonschema_rs.ValidationError):
    """Yield (path parts, message, is_unknown_key) for the most specific cause of ``error``."""
    parts, kind, instance = list(error.instance_path), error.kind, error.instance
    if isinstance(kind, (Kind.UnevaluatedProperties, Kind.AdditionalProperties)):
        for key in kind.unexpected:
            yield [*parts, key], f"unknown key {key!r}", True
        return
    if isinstance(kind, (Kind.OneOfNotValid, Kind.AnyOf)):
        causes = [cause for branch in kind.context for cause in branch]
        required = [c.kind for c in causes if isinstance(c.kind, Kind.Required)]
        if isinstance(kind, Kind.OneOfNotValid) and causes and len(required) == len(causes):
            yield parts, f"needs exactly one of: {', '.join(r.property for r in required)}", False
            return
        # In a oneOf/anyOf over keys (the quality operators), the branches for absent keys fail
        # with "required"; the branch of the key that is present says what is wrong with it.
        present = [c for c in causes if not isinstance(c.kind, Kind.Required)] or causes
        level_types = [c.kind for c in present if isinstance(c.kind, Kind.Type) and len(c.instance_path) == len(parts)]
        if present and len(level_types) == len(present):
            types = ", ".join(repr(name) for t in level_types for name in t.types)
            yield parts, f"{instance!r} is not of type {types}", False  # e.g. neither a string nor an object
            return
        deepest = max((len(c.instance_path) for c in present), default=-1)
        if deepest > len(parts) or len(present) == 1:  # one cause nearer the value than the rest
            yield from _describe(next(c for c in present if len(c.instance_path) == deepest))
            return
    if (isinstance(kind, Kind.Required) and kind.property == "map" and isinstance(instance, dict)
            and "name" in instance and "logicalType" not in instance):
        # The bundled schema's `if logicalType == map` branch matches when logicalType is absent,
        # which surfaces as "'map' is a required property"; say what is really missing.
        yield parts, "logicalType is required (string, date, timestamp, time, number, integer, object, array, boolean, map)", False
        return
    message = _message(kind, instance, error.message)
    if isinstance(kind, Kind.Type) and isinstance(instance, str) and _YAML_EXPONENT.fullmatch(instance):
        message += f" (YAML reads {instance} as text: write it with a dot, like 1.0e+5)"
    yield parts, message, False


def _message(kind, instance, default: str) -> str:
    """The library's message in the project's wording: values as Python writes them (the
    library writes JSON) and every allowed value of an enum (the library names two)."""
    if isinstance(kind, Kind.Type):
        return f"{instance!r} is not of type {', '.join(repr(name) for name in kind.types)}"
    if isinstance(kind, Kind.Enum):
        return f"{instance!r} is not one of {kind.options!r}"
    if isinstance(kind, Kind.Constant):
        return f"{kind.expected_value!r} was expected"
    if isinstance(kind, Kind.Required):
        return f"{kind.property!r} is a required property"
    if isinstance(kind, Kind.MinItems):
        return f"{instance!r} should be non-empty" if kind.limit == 1 else f"{instance!r} is too short"
    if isinstance(kind, Kind.Pattern):
        return f"{instance!r} does not match {kind.pattern!r}"
    if isinstance(kind, (Kind.OneOfNotValid, Kind.AnyOf)):
        return f"{instance!r} is not valid under any of the given schemas"
    if isinstance(kind, Kind.OneOfMultipleValid):
        return f"{instance!r} is valid under more than one of the given schemas"
    return default
