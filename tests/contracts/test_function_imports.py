"""An import inside a function is there only to keep a heavy dependency (pyspark, Airflow, delta,
deltalake, openlineage) out of import time, or to break a cycle, and it says so: a comment on
its line or the line before (one comment serves a block of imports that follow each other).
Any other import belongs at the top of its module, where the import-layer check and a reader
see it."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "provider" / "contract_gate", ROOT / "contract_plan" / "contract_gate_plan", ROOT / "spark_jobs" / "contract_gate_spark"]


def _commented_lines(source: str) -> set[int]:
    """The line numbers that carry a comment (a ``#`` inside a string is not one)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return sorted(found, key=lambda node: node.lineno)


def _module_name(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return ", ".join(alias.name for alias in node.names)
    return "." * node.level + (node.module or "")


def unexplained(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import inside a function of ``source`` that says no reason."""
    comments = _commented_lines(source)
    explained_ends: set[int] = set()  # last lines of the explained imports: a block shares a comment
    found = []
    for node in _function_imports(ast.parse(source)):
        said = comments & set(range(node.lineno - 1, node.end_lineno + 1))
        if said or node.lineno - 1 in explained_ends:
            explained_ends.add(node.end_lineno)
        else:
            found.append((node.lineno, _module_name(node)))
    return found


def test_every_import_inside_a_function_says_why():
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                name = path.relative_to(ROOT).as_posix()
                source = path.read_text(encoding="utf-8")
                found += [f"{name}:{line} imports {module}" for line, module in unexplained(source)]
    assert found == [], ("imports inside functions without a reason: move each to the top of its module, or say on "
                         "its line or the line before which heavy dependency or cycle keeps it there\n" + "\n".join(found))


def test_the_check_sees_a_reason_where_one_is_given():
    source = '''
import json


def top():
    from a import b
    text = "# not a comment"
    import c
    # pyspark: loaded only here
    from d import e
    from f import g
    import h  # Airflow, at run time


    import i

    def inner():
        from j import k
        return k


class Thing:
    def method(self):
        from l import m  # a cycle: l imports this module
        from .n import o

        from .p import q
        return m, o, q
'''
    assert unexplained(source) == [(6, "a"), (8, "c"), (15, "i"), (18, "j"), (27, ".p")]
