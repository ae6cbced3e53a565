"""YAML reading that keeps line numbers and refuses duplicate keys.

PyYAML silently keeps the last of two equal keys; a contract with two ``minimum`` keys is
ambiguous, so duplicates are reported instead. Line numbers are 1-based.

Lines are kept as a tree beside the data (a mapping node's keys map to (line, subtree), a
sequence's items are a list of subtrees) and a YAML path is only resolved when an error needs
its line: most contracts have none, and building a path string for every node would cost more
than parsing the file.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

import yaml

from contract_gate.contract.errors import yaml_path



class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's parser (about ten times faster; the pure-Python one gives the same nodes and
    marks) with the tag resolution of plain scalars memoised: resolving is pure Python, runs a
    regular expression per scalar, and a contract repeats the same few dozen words."""

    _resolved: dict = {}

    def resolve(self, kind, value, implicit):
        key = (kind, value, implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._resolved) < 100_000:
                self._resolved[key] = tag
        return tag
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_PATH_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass
class YamlDocument:
    data: object
    # Where each node starts: an int for a scalar, (line, {key: (key line, child)}) for a
    # mapping, (line, [child, ...]) for a sequence.
    lines: object = None
    duplicates: list[tuple[str, int]] = field(default_factory=list)

    def line_of(self, path: str) -> int | None:
        """The line of ``path`` (``schema[0].properties[2].name``) or of its closest ancestor."""
        node = self.lines
        line = node if isinstance(node, int) else node[0] if node else None
        for index, key in _PATH_PART.findall(path):
            children = node[1] if isinstance(node, tuple) else None
            if index and isinstance(children, list) and int(index) < len(children):
                node = children[int(index)]
                line = node if isinstance(node, int) else node[0]
            elif not index and isinstance(children, dict) and key in children:
                line, node = children[key]
            else:
                break
        return line


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
    try:
        doc.data, doc.lines = _Builder(doc).build(node, None)
    except yaml.YAMLError as exc:  # a tag the safe loader refuses, such as !!python/object
        mark = getattr(exc, "problem_mark", None)
        raise YamlSyntaxError(f"YAML error: {getattr(exc, 'problem', None) or exc}", mark.line + 1 if mark else None) from exc
    return doc


class _Builder:
    def __init__(self, doc: YamlDocument):
        self.doc = doc
        self.constructor = yaml.SafeLoader("")
        self.scalars = self.constructor.yaml_constructors

    def build(self, node, parent):
        """(value, lines) of ``node``; ``parent`` is (grandparent, key) so a path string is only
        built for the rare duplicate key."""
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node), line
        if node.tag not in _COLLECTION_TAGS:
            raise yaml.constructor.ConstructorError(None, None, f"unsupported YAML tag {node.tag!r}", node.start_mark)
        if isinstance(node, yaml.SequenceNode):
            values, children = [], []
            for i, item in enumerate(node.value):
                value, item_lines = self.build(item, (parent, i))
                values.append(value)
                children.append(item_lines)
            return values, (line, children)
        result, keys = {}, {}
        for key_node, value_node in node.value:
            key = self.scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else \
                self.constructor.construct_object(key_node, deep=True)
            if key in result:
                self.doc.duplicates.append((yaml_path(_parts((parent, key))), key_node.start_mark.line + 1))
                continue
            result[key], value_lines = self.build(value_node, (parent, key))
            keys[key] = (key_node.start_mark.line + 1, value_lines)
        return result, (line, keys)

    def scalar(self, node):
        if node.tag == "tag:yaml.org,2002:str":
            return node.value  # the common case, without the constructor's bookkeeping
        value = self.scalars[node.tag](self.constructor, node) if node.tag in self.scalars else \
            self.constructor.construct_object(node, deep=True)
        # JSON has no date type; ODCS writes dates and timestamps as ISO strings.
        return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else value


def _parts(chain) -> list:
    parts = []
    while chain is not None:
        chain, key = chain
        parts.append(key)
    return parts[::-1]
