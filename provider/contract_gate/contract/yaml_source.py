"""YAML reading that keeps line numbers and refuses duplicate keys.

PyYAML silently keeps the last of two equal keys; a contract with two ``minimum`` keys is
ambiguous, so duplicates are reported instead. Line numbers are 1-based.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

import yaml

from contract_gate.contract.errors import yaml_path

# libyaml's parser is about ten times faster; the pure-Python one gives the same nodes and marks.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class YamlDocument:
    data: object
    lines: dict[str, int] = field(default_factory=dict)  # yaml path -> line
    duplicates: list[tuple[str, int]] = field(default_factory=list)

    def line_of(self, path: str) -> int | None:
        """The line of ``path`` or of its closest ancestor that has one."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""


class YamlSyntaxError(ValueError):
    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


def parse_yaml(text: str) -> YamlDocument:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlSyntaxError(f"YAML syntax error: {problem}", mark.line + 1 if mark else None) from exc
    doc = YamlDocument(data=None)
    if node is None:
        return doc
    constructor = yaml.SafeLoader("")
    doc.data = _build(node, [], doc, constructor)
    return doc


def _build(node, parts: list, doc: YamlDocument, constructor):
    doc.lines.setdefault(yaml_path(parts), node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if key in result:
                doc.duplicates.append((yaml_path([*parts, key]), key_node.start_mark.line + 1))
                continue
            doc.lines[yaml_path([*parts, key])] = key_node.start_mark.line + 1
            result[key] = _build(value_node, [*parts, key], doc, constructor)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, [*parts, i], doc, constructor) for i, item in enumerate(node.value)]
    value = constructor.construct_object(node, deep=True)
    # JSON has no date type; ODCS writes dates and timestamps as ISO strings.
    return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else value
