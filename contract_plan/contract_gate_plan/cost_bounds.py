"""The bounds on what one contract rule may make Spark build, and the check of a Java regex.

A contract is hostile input, and a single line of it can ask Spark for unbounded work: a join
that multiplies the batch by itself, a string of a billion characters per row, a regular
expression of a million characters. The allow-list (``contract_gate_plan.sql_allowlist``) and the
pattern translator (``contract_gate.contract.patterns``) refuse such text with these bounds, so
both sides judge a plan by the same numbers. What the bounds cannot see (a join on a key that
every row shares, a regex that backtracks) is stopped by the gate's time budget.

Standard library only: both sides import it.
"""

from __future__ import annotations

# A query reads its batch at most this often (a self-join, a subquery, a CTE read twice): each
# reference can multiply the rows a join produces.
MAX_BATCH_REFERENCES = 3
# The characters one repeat(), lpad(), rpad() or space() may build (a count from the contract).
MAX_BUILT_LENGTH = 10_000
# A regular expression's characters, and each of its {n,m} repetition counts.
MAX_REGEX_LENGTH = 10_000
MAX_REGEX_REPEAT = 10_000

_BRACED_ESCAPES = "xpPNk"  # \x{..} \p{..} \P{..} \N{..} \k<..>: braces that are no quantifier


def regex_problem(regex: str) -> str | None:
    """Why the Java regex ``regex`` is above the bounds (None: it is within them).

    Reads only what a bound needs: escapes (``\\Q...\\E`` quoting included) and character
    classes are skipped, every other ``{n}``, ``{n,}`` or ``{n,m}`` is a repetition count."""
    if problem := length_problem(len(regex)):
        return problem
    position, depth = 0, 0  # depth: nesting of character classes (Java nests them)
    while position < len(regex):
        char = regex[position]
        if char == "\\":
            position = _after_escape(regex, position)
            continue
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
        elif char == "{" and not depth:
            count = _largest_count(regex, position)
            if count is not None and (problem := repeat_problem(count)):
                return problem
        position += 1
    return None


def length_problem(length: int) -> str | None:
    """Why a regular expression of ``length`` characters is above the bound (None: it is not)."""
    if length > MAX_REGEX_LENGTH:
        return f"a regular expression of {length} characters is above the bound {MAX_REGEX_LENGTH}"
    return None


def repeat_problem(count: int) -> str | None:
    """Why the repetition count ``count`` ({n} or {n,m}) is above the bound (None: it is not)."""
    if count > MAX_REGEX_REPEAT:
        return f"a regular expression repetition count {count} is above the bound {MAX_REGEX_REPEAT}"
    return None


def _after_escape(regex: str, position: int) -> int:
    letter = regex[position + 1:position + 2]
    if letter == "Q":
        end = regex.find("\\E", position + 2)
        return len(regex) if end < 0 else end + 2
    if letter and letter in _BRACED_ESCAPES and regex[position + 2:position + 3] in ("{", "<"):
        end = regex.find("}" if regex[position + 2] == "{" else ">", position + 3)
        return len(regex) if end < 0 else end + 1
    return position + 2


def _largest_count(regex: str, position: int) -> int | None:
    """The larger number of a quantifier ``{n}``, ``{n,}`` or ``{n,m}`` at ``position``, or None."""
    end = regex.find("}", position)
    low, comma, high = regex[position + 1:end if end > 0 else position].partition(",")
    if end < 0 or not (low.isascii() and low.isdigit()) or (high and not (high.isascii() and high.isdigit())):
        return None
    return max(int(low), int(high) if high else 0) if comma else int(low)
