"""The gate DAG's ``doc_md``: the contract's purpose, its tables and every rule it enforces, with
every text from the contract shown literally."""

from __future__ import annotations

import re
from pathlib import Path

from contract_gate_plan.model import Plan


def render_doc(plan: Plan, contract: Path, description=None) -> str:
    """``doc_md``: what the contract is for, where data goes, and every rule it enforces.

    Every text from the contract is shown as it was written, never as Markdown: a producer's
    rule id or description could otherwise add a link to the gate's page or break its tables."""
    tables = plan.require_tables()
    domain = f" (domain {_code(plan.contract_domain)})" if plan.contract_domain else ""
    lines = [f"# {_text(plan.contract_name or plan.contract_id)} — contract gate", "",
             f"Contract {_code(plan.contract_id)} version {_code(plan.contract_version)} from {_code(str(contract))}"
             f"{domain}; environment {_code(plan.environment)}; plan `{plan.fingerprint[:19]}…`.", ""]
    if description is not None:
        parts = [(name, getattr(description, name, None)) for name in ("purpose", "usage", "limitations")]
        lines += ["\n\n".join(f"**{name.capitalize()}.** {_text(text)}" for name, text in parts if text), ""]
    violations = plan.violations
    lines += [
        "| | |", "|---|---|",
        *(f"| {name} | {_code(address.location if address else '')} |" for name, address in
          (("landing", tables.landing), ("target", tables.target), ("quarantine", tables.quarantine),
           ("decisions", tables.decisions))),
        f"| publication | {plan.publication_mode} |",
        f"| violations | {violations['policy']}"
        f"{', maxInvalidShare ' + str(violations['maxInvalidShare']) if violations.get('maxInvalidShare') is not None else ''} |",
        "", "## Rules", "", "| rule | kind | columns | severity | from |", "|---|---|---|---|---|",
    ]
    lines += [f"| {_code(r.id)} | {r.kind} | {', '.join(_code(c) for c in r.columns)} | {r.severity} | {_code(r.source)} |"
              for r in plan.rules]
    return "\n".join(lines) + "\n"


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


def _text(text: object) -> str:
    """Contract text as literal Markdown text: every punctuation mark escaped, one line."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(str(text).split()))


def _code(text: object) -> str:
    """Contract text as a literal code span inside a table cell: a fence longer than any run of
    back-quotes in it, and pipes escaped (GFM splits cells on them even inside code)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
