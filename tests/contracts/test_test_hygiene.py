"""The suite's own rules, checked on its source so they stay true (issue 13, item 8).

Every test stands alone: it waits on a condition with a timeout (``tests/waiting.py``), never
for a fixed time; it keeps no state in a module global for another test to find (a ``global``
statement is how that starts); and it does not import benchmark code (benchmarks may use the
suite's helpers, not the other way round).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "remove",
            "discard", "clear"}


def problems(source: str) -> list[str]:
    """What in ``source`` (a module of the suite) breaks the rules, one line per finding."""
    tree = ast.parse(source)
    found = _tests_writing_module_state(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_sleep(node.func) and node.args \
                and isinstance(node.args[0], ast.Constant):
            found.append(f"line {node.lineno}: a fixed sleep ({ast.unparse(node)}); wait on the condition "
                         "(waiting.wait_until)")
        elif isinstance(node, ast.Global):
            found.append(f"line {node.lineno}: global {', '.join(node.names)}; each test makes the state it needs")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] == "benchmarks"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "benchmarks":
            found.append(f"line {node.lineno}: imports from {node.module}")
        elif _extends_import_path(node) and any(
                isinstance(part, ast.Constant) and isinstance(part.value, str)
                and _points_into_benchmarks(part.value) for part in ast.walk(node)):
            found.append(f"line {node.lineno}: puts the benchmarks folder on the import path")
    return found


def _extends_import_path(node: ast.AST) -> bool:
    """``sys.path.insert/append/extend(...)`` or an assignment to ``sys.path`` (or a slice of it)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("insert", "append", "extend") and ast.unparse(node.func.value) == "sys.path"
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(ast.unparse(target).startswith("sys.path") for target in targets)
    return False


def _tests_writing_module_state(tree: ast.Module) -> list[str]:
    """A test (``test_*``) that stores into a module-level name (``RUNS["x"] = run``,
    ``SEEN.append(...)``): the next test would find it there."""
    module_names = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(target, ast.Name)}
    found = []
    for test in ast.walk(tree):
        if not isinstance(test, (ast.FunctionDef, ast.AsyncFunctionDef)) or not test.name.startswith("test"):
            continue
        local = {arg.arg for arg in [*test.args.args, *test.args.kwonlyargs]}
        local |= {node.id for node in ast.walk(test) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        for node in ast.walk(test):
            written = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                written = next((t.value for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))), None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                written = node.func.value
            if isinstance(written, ast.Name) and written.id in module_names and written.id not in local:
                found.append(f"line {node.lineno}: {test.name} writes the module-level {written.id}; "
                             "each test makes the state it needs")
    return found


def _is_sleep(func: ast.expr) -> bool:
    """``time.sleep`` or a bare ``sleep`` (``from time import sleep``)."""
    return (isinstance(func, ast.Attribute) and func.attr == "sleep" and isinstance(func.value, ast.Name)
            and func.value.id == "time") or (isinstance(func, ast.Name) and func.id == "sleep")


def _points_into_benchmarks(text: str) -> bool:
    """A path segment naming the benchmarks folder, as a ``sys.path`` insert would spell it."""
    return text.strip("/") == "benchmarks" or text.startswith("benchmarks/")


def suite_modules() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts)


@pytest.mark.parametrize("path", suite_modules(), ids=lambda path: str(path.relative_to(TESTS)))
def test_the_suite_keeps_its_own_rules(path):
    assert problems(path.read_text(encoding="utf-8")) == [], path


@pytest.mark.parametrize(("source", "finding"), [
    ("import time\ntime.sleep(0.5)\n", "line 2: a fixed sleep (time.sleep(0.5))"),
    ("from time import sleep\nsleep(2)\n", "line 2: a fixed sleep (sleep(2))"),
    ("STATE = {}\ndef test_a():\n    global STATE\n    STATE = {'x': 1}\n", "line 3: global STATE"),
    ("RUNS = {}\ndef test_a(gate):\n    RUNS['x'] = gate.run()\n", "line 3: test_a writes the module-level RUNS"),
    ("SEEN = []\ndef test_a():\n    SEEN.append(1)\n", "line 3: test_a writes the module-level SEEN"),
    ("import benchmarks.reliability.trials\n", "line 1: imports benchmarks.reliability.trials"),
    ("from benchmarks.reliability import trials\n", "line 1: imports from benchmarks.reliability"),
    ("import sys\nsys.path.insert(0, str(ROOT / 'benchmarks' / 'reliability'))\n",
     "line 2: puts the benchmarks folder on the import path"),
    ("import sys\nsys.path[:0] = ['benchmarks/reliability']\n", "line 2: puts the benchmarks folder"),
])
def test_each_rule_is_caught(source, finding):
    assert [problem for problem in problems(source) if problem.startswith(finding)] != []


@pytest.mark.parametrize("source", [
    "time.sleep(interval)\n",  # the wait helper's poll interval
    "time.sleep(rng.uniform(0.0, 1.0))\n",  # a random fault-injection moment is not a wait
    "script = 'import time\\ntime.sleep(300)\\n'\n",  # text of a child process the test then kills
    "from benchmarks_like import x\n",
    "ROWS = []\ndef test_a():\n    ROWS = [1]\n    ROWS.append(2)\n",  # a local of the same name
    "CACHE = {}\ndef _compiled(key):\n    CACHE[key] = 1\n",  # a helper's memo of a pure function
    "def test_a(tmp_path):\n    tmp_path.joinpath('x').write_text('')\n",
    "RESULTS = ROOT / 'benchmarks' / 'RESULTS.md'\n",  # reading a benchmark's file is not importing it
])
def test_what_the_rules_allow(source):
    assert problems(source) == []
