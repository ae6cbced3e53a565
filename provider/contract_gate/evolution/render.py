"""A contract diff as text (a terminal), JSON (a program) or Markdown (a pull-request comment).

Every contract-derived text in a change is already shortened and escaped (``changes.shown``);
in Markdown each such text is a code span as well, where no link, image, autolink or HTML is
read, so a contract cannot add one to the comment.
"""

from __future__ import annotations

import json
import re

from contract_gate.evolution.changes import escaped
from contract_gate.evolution.diff import ContractDiff, Side

FORMATS = ("text", "json", "markdown")


def render(diff: ContractDiff, form: str) -> str:
    return {"text": _text, "json": _json, "markdown": _markdown}[form](diff)


def _side(side: Side) -> str:
    return f"{side.file} ({escaped(side.id)} {escaped(str(side.version))})"


def _summary(diff: ContractDiff) -> str:
    counts = diff.counts()
    return ", ".join(f"{n} {impact}" for impact, n in counts.items())


def _text(diff: ContractDiff) -> str:
    lines = [f"{_side(diff.old)} -> {_side(diff.new)}"]
    width = max((len(c.impact.value) for c in diff.changes), default=0)
    for change in diff.changes:
        where = f"{escaped(change.object)}: " if change.object else ""
        lines.append(f"  {change.impact.value.upper():<{width}}  {where}{change.subject}: {change.message}")
    if not diff.changes:
        lines.append("  no changes")
    lines += [f"version: {problem}" for problem in diff.version_problems] or ["version: ok"]
    lines.append(_summary(diff))
    return "\n".join(lines) + "\n"


def _json(diff: ContractDiff) -> str:
    return json.dumps(diff.as_json(), indent=2, ensure_ascii=False) + "\n"


def _code(text: str) -> str:
    """``text`` as a Markdown code span inside a table cell (a ``|`` would end the cell)."""
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text.replace('|', chr(92) + '|')} {fence}"


def _markdown(diff: ContractDiff) -> str:
    verdict = "breaking" if diff.breaking else "no breaking change"
    lines = [f"### Contract {_code(escaped(diff.new.id))}: {_code(escaped(str(diff.old.version)))} → "
             f"{_code(escaped(str(diff.new.version)))} ({verdict})", "", f"**{_summary(diff)}**", ""]
    if diff.version_problems:
        lines += [f"- **version**: {_code(problem)}" for problem in diff.version_problems] + [""]
    if diff.changes:
        lines += ["| impact | object | what | change |", "|---|---|---|---|"]
        for change in diff.changes:
            impact = f"**{change.impact.value}**" if change.impact.value == "breaking" else change.impact.value
            lines.append(f"| {impact} | {_code(escaped(change.object or ''))} | {_code(change.subject)} | "
                         f"{_code(change.message)} |")
    else:
        lines.append("No changes.")
    return "\n".join(lines) + "\n"
