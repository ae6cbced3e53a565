"""YAML reading that keeps line numbers and refuses duplicate keys.

PyYAML silently keeps the last of two equal keys; a contract with two ``minimum`` keys is
ambiguous, so duplicates are reported instead. Line numbers are 1-based.

Lines are kept as a tree beside the data (a mapping node's keys map to (line, subtree), a
sequence's items are a list of subtrees) and a YAML path is only resolved when an error needs
its line: most contracts have none, and building a path string for every node would cost more
than parsing the file.

A contract is untrusted input, so parsing is bounded. libyaml composes an alias as a second
reference to its anchor's node, which is cheap; the cost comes when the nodes become Python
values, where every use of an alias is a full copy: nine levels of nine aliases (a few hundred
bytes) make 387 million values. The builder counts every value it makes, aliases counted at
each use, and stops at :data:`MAX_NODES`, and it stops at :data:`MAX_DEPTH` levels (an alias
inside its own anchor nests without end). The file size is capped by the loader
(``contract_gate.contract.loader.MAX_CONTRACT_BYTES``).
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass, field

import yaml

from contract_gate.contract.errors import yaml_path

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # a PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader


class _Loader(_BaseLoader):
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

MAX_NODES = 100_000
"""Values a contract may expand to, aliases counted at every use. The largest contract of the
contract benchmark has about 2,000; one with 2,000 columns about 40,000."""
MAX_DEPTH = 100
"""Nesting levels; an ODCS contract needs fewer than 15."""
_PATH_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


# Where each node starts: an int for a scalar, (line, {key: (key line, child)}) for a mapping,
# (line, [child, ...]) for a sequence.
NodeLines = int | tuple[int, "dict[object, tuple[int, NodeLines]]"] | tuple[int, "list[NodeLines]"]


@dataclass
class YamlDocument:
    data: object
    lines: NodeLines | None = None
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
    def __init__(self, message: str, line: int | None, path: str = ""):
        super().__init__(message)
        self.line = line
        self.path = path


class _Refused(Exception):
    """A node refused at ``chain`` (the builder's parent chain), ``line``: a limit passed, a
    tag the safe loader refuses, a value that cannot be read."""

    def __init__(self, message: str, chain, line: int):
        super().__init__(message)
        self.chain = chain
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
    except _Refused as exc:
        raise YamlSyntaxError(str(exc), exc.line, yaml_path(_parts(exc.chain))) from None
    return doc


class _Builder:
    def __init__(self, doc: YamlDocument):
        self.doc = doc
        self.constructor = yaml.SafeLoader("")
        self.scalars = self.constructor.yaml_constructors
        self.budget = MAX_NODES
        self.depth = 0
        self.built: set[int] = set()  # collection nodes built once: seeing one again is an alias
        self.alias = None  # (chain, line) of the outermost alias being expanded

    def build(self, node, parent, line_used=None):
        """(value, lines) of ``node``; ``parent`` is (grandparent, key) so a path string is only
        built for the rare duplicate key or a limit; ``line_used`` is where ``node`` is used
        (for an alias, its anchor's line is elsewhere)."""
        line = node.start_mark.line + 1
        self.budget -= 1
        if self.budget < 0:
            chain, used = self.alias or (parent, line_used or line)
            raise _Refused(f"the document expands to more than {MAX_NODES:,} YAML values (each use of an "
                            "alias counts in full): a contract is refused past this limit", chain, used)
        if isinstance(node, yaml.ScalarNode):
            try:
                return self.scalar(node), line
            except (yaml.YAMLError, ValueError) as exc:  # a refused tag; an integer of 5,000 digits
                raise _Refused(f"YAML error: {getattr(exc, 'problem', None) or exc}", parent, line) from exc
        if node.tag not in _COLLECTION_TAGS:  # such as !!python/object/apply
            raise _Refused(f"YAML error: unsupported YAML tag {node.tag!r}", parent, line)
        outermost = False
        if id(node) in self.built:
            if self.alias is None:
                self.alias, outermost = (parent, line_used or line), True
        else:
            self.built.add(id(node))
        self.depth += 1
        if self.depth > MAX_DEPTH:
            chain, used = self.alias or (parent, line_used or line)
            raise _Refused(f"the document nests deeper than {MAX_DEPTH} levels (an alias used inside its own "
                            "anchor nests without end)", chain, used)
        try:
            if isinstance(node, yaml.SequenceNode):
                values, children = [], []
                for i, item in enumerate(node.value):
                    value, item_lines = self.build(item, (parent, i), line)
                    values.append(value)
                    children.append(item_lines)
                return values, (line, children)
            result, keys = {}, {}
            for key_node, value_node in node.value:
                key = self.key(key_node, parent)
                key_line = key_node.start_mark.line + 1
                if key in result:
                    self.doc.duplicates.append((yaml_path(_parts((parent, key))), key_line))
                    continue
                result[key], value_lines = self.build(value_node, (parent, key), key_line)
                keys[key] = (key_line, value_lines)
            return result, (line, keys)
        finally:
            self.depth -= 1
            if outermost:
                self.alias = None

    def key(self, node, parent):
        """A mapping key: a scalar (a list or mapping as a key means nothing in a contract, and
        Python could not use it as one)."""
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            raise _Refused("YAML error: a mapping key must be a plain value, not a list or a mapping", parent, line)
        try:
            return self.scalar(node)
        except (yaml.YAMLError, ValueError) as exc:
            raise _Refused(f"YAML error: {getattr(exc, 'problem', None) or exc}", parent, line) from exc

    def scalar(self, node):
        if node.tag == "tag:yaml.org,2002:str":
            return node.value  # the common case, without the constructor's bookkeeping
        try:
            value = self.scalars[node.tag](self.constructor, node) if node.tag in self.scalars else \
                self.constructor.construct_object(node, deep=True)
        except ValueError as exc:  # an integer of more than 4,300 digits, say
            raise ValueError(f"unreadable {node.tag.rsplit(':', 1)[-1]} value: {exc}") from exc
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{node.value} is not a finite number: a contract is JSON data, which has no NaN "
                             "or infinity")
        # JSON has no date type; ODCS writes dates and timestamps as ISO strings.
        return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else value


def _parts(chain) -> list:
    parts = []
    while chain is not None:
        chain, key = chain
        parts.append(key)
    return parts[::-1]
