"""Contract texts and compile helpers for the contract-side tests (a module of its own, not a
conftest: every test folder has a conftest, and only one of them can be the module ``conftest``)."""

from __future__ import annotations

import textwrap

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.contract.loader import load_contract_text

HEADER = """\
apiVersion: v3.1.0
kind: DataContract
id: t
version: 1.0.0
status: active
schema:
  - name: t
    physicalType: table
    properties:
"""


def contract(properties: str, quality: str = "", extra: str = "") -> str:
    """A contract text for dataset ``t`` with the given property list (YAML, unindented),
    schema-level quality entries and top-level extra YAML."""
    text = HEADER + textwrap.indent(textwrap.dedent(properties).strip("\n"), "      ") + "\n"
    if quality:
        text += "    quality:\n" + textwrap.indent(textwrap.dedent(quality).strip("\n"), "      ") + "\n"
    return text + textwrap.dedent(extra).strip("\n") + ("\n" if extra else "")


def column(name: str, physical: str, logical: str, **extra: str) -> str:
    """One property as YAML; ``extra`` values are YAML snippets placed under the property."""
    text = f"- name: {name}\n  physicalType: {physical}\n  logicalType: {logical}\n"
    for key, value in extra.items():
        value = textwrap.dedent(value).strip("\n")
        text += f"  {key}:" + (f" {value}\n" if "\n" not in value else "\n" + textwrap.indent(value, "    ") + "\n")
    return text


def compile_text(text: str, env: str | None = None) -> dict:
    """The plan document of a contract text (``compile_plan`` gives the typed ``Plan``)."""
    return compile_plan(load_contract_text(text, "c.yaml"), env).document


def issues_of(text: str, env: str | None = None) -> list[tuple[str, str]]:
    """(path, message) of every issue; fails the test if the contract compiles."""
    with pytest.raises(ContractError) as caught:
        compile_text(text, env)
    return [(issue.path, issue.message) for issue in caught.value.issues]


def rule(plan: dict, rule_id: str) -> dict:
    matches = [r for r in plan["rules"] if r["id"] == rule_id]
    assert matches, f"no rule {rule_id!r}; rules: {[r['id'] for r in plan['rules']]}"
    return matches[0]
