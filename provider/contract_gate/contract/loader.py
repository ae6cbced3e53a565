"""Load an ODCS v3 contract: YAML -> JSON-schema check -> typed model.

The raw document is checked against the JSON schema that ``open-data-contract-standard``
ships *before* the pydantic model is built, because the model silently drops unknown nested
keys. Every error is collected with its YAML path and line.

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

import jsonschema
from open_data_contract_standard.model import OpenDataContractStandard

from contract_gate.contract.errors import ContractError, ContractIssue, yaml_path
from contract_gate.contract.schema_check import SchemaChecker
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


@functools.cache
def _schema() -> dict:
    return json.loads(resources.files("open_data_contract_standard").joinpath("schema.json").read_text("utf-8"))


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = _schema()
    return jsonschema.validators.validator_for(schema)(schema)


@functools.cache
def _fast_check() -> SchemaChecker:
    return SchemaChecker(_schema())


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
    if _fast_check()(source.data):
        return []  # jsonschema (slow) only runs to explain a document known to be invalid
    structural: set[ContractIssue] = set()
    unknown_keys: set[ContractIssue] = set()
    for error in _validator().iter_errors(source.data):
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


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


# YAML 1.1 needs a dot in a float: 1e5 is the string "1e5", 1.0e+5 the number.
_YAML_EXPONENT = re.compile(r"[-+]?\d+[eE][-+]?\d+")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _describe(error: jsonschema.ValidationError):
    """Yield (path parts, message, is_unknown_key) for the most specific cause of ``error``."""
    parts = list(error.absolute_path)
    if error.validator in ("unevaluatedProperties", "additionalProperties"):
        detail = error.message[error.message.find("("):]
        for key in _QUOTED.findall(detail):
            yield [*parts, key], f"unknown key {key!r}", True
        return
    if error.validator == "oneOf" and error.context and all(e.validator == "required" for e in error.context):
        options = ", ".join(e.message.split("'")[1] for e in error.context)
        yield parts, f"needs exactly one of: {options}", False
        return
    if error.context:
        # In a oneOf/anyOf over keys (the quality operators), the branches for absent keys fail
        # with "required"; the branch of the key that is present says what is wrong with it.
        present = [e for e in error.context if e.validator != "required"] or error.context
        yield from _describe(jsonschema.exceptions.best_match(present))
        return
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict) and "name" in instance and "logicalType" not in instance:
        # The bundled schema's `if logicalType == map/vector` branches match when logicalType is
        # absent, which surfaces as "'map' is a required property"; say what is really missing.
        yield parts, "logicalType is required (string, date, timestamp, time, number, integer, object, array, boolean, map)", False
        return
    if error.validator == "type" and isinstance(instance, str) and _YAML_EXPONENT.fullmatch(instance):
        yield parts, f"{error.message} (YAML reads {instance} as text: write it with a dot, like 1.0e+5)", False
        return
    yield parts, error.message, False
