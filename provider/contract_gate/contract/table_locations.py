"""Where a contract may put its tables: names that become paths, and paths that stay under the root.

A contract is hostile input, and its names become folders and catalog names: ``schema[0].name``
is the target's default name and every candidate's name prefix, ``table:`` names become paths
under a path server's root. So:

* names that become paths or table names are plain identifiers (:data:`IDENTIFIER_FORM`);
* the server's root (``servers[].path``) is relative to the gate's home, or an absolute
  folder or URI the deployment lists in ``[contract_gate] roots``: a contract cannot make ``/`` its
  lakehouse;
* every table the gate **writes** (target, quarantine, decisions, the candidate folder) stays
  under the server's root: a relative ``path:`` without ``..``, an absolute one under an absolute
  root, a URI under a root of the same scheme and prefix, and no symbolic link (where one exists
  at compile time) that leads out of the root; catalog tables stay in the server's catalog;
* the **landing** is only read, but what it reads is frozen into a candidate and quarantined
  rows that the contract owner may read, so it must not be a way to read someone else's data:
  it stays under the server's root or under a folder the deployment lists in
  ``[contract_gate] landing_roots`` (comma-separated paths or URIs), without ``..``;
* no path holds a glob character (``* ? [ ] { } \\``): Spark expands globs when it reads, so
  ``landing/{orders,billing}`` would read another team's folder as this contract's batch;
* a contract's own tables never overlap: the landing, the target, the quarantine, the decision
  table and the candidate folder are different places, none inside another;
* a target, quarantine or landing is no name the gate keeps for itself (``_runs``, any name
  starting with ``_``...) and lies inside none, anywhere below the root (``contract_gate_plan.reserved``).

Two contracts claiming the same table are found across files by ``contract.claims``; at run
time every write step checks the table's ownership properties (``contract_gate_plan.ownership``).
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from contract_gate import config
from contract_gate.contract.environments import DEFAULT_ROOT
from contract_gate_plan.addresses import GLOB_SPECIALS, Address, candidate_schema
from contract_gate_plan.reserved import reserved_problems

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IDENTIFIER_FORM = "a plain identifier: ASCII letters, digits and '_', not starting with a digit ([A-Za-z_][A-Za-z0-9_]*)"
WRITTEN = ("target", "quarantine", "decisions", "candidate_schema")
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_GLOB = re.compile(f"[{re.escape(GLOB_SPECIALS)}]")
_CATALOG_NAME_REFUSED = re.compile(r"[.\s/`\x00-\x1f\x7f]")


def table_sources(raw: dict[str, Any]) -> dict[str, str]:
    """The YAML path each table address comes from, for a contract's raw YAML data: the gate
    setting that names it (``customProperties[0].value.quarantine.path``), else the dataset
    name it defaults to (``schema[0].name``); each query reference's as ``references.<alias>``."""
    settings_path, settings = None, {}
    for index, entry in enumerate(raw.get("customProperties") or []):
        if isinstance(entry, dict) and entry.get("property") == "contractGate" and isinstance(entry.get("value"), dict):
            settings_path, settings = f"customProperties[{index}].value", entry["value"]
            break
    sources = {}
    for role, key in (("landing", "landing"), ("target", "target"), ("quarantine", "quarantine"),
                      ("decisions", "decisions"), ("candidate_schema", "candidate")):
        given = settings.get(key)
        if isinstance(given, dict) and role == "candidate_schema" and "schema" in given:
            sources[role] = f"{settings_path}.candidate.schema"
        elif isinstance(given, dict) and ("path" in given or "table" in given):
            sources[role] = f"{settings_path}.{key}.{'path' if 'path' in given else 'table'}"
        elif role == "decisions":
            sources[role] = settings_path or ""
        else:
            sources[role] = "schema[0].name"
    references = settings.get("references")
    for alias in references if isinstance(references, dict) else ():
        sources[f"references.{alias}"] = f"{settings_path}.references.{alias}.table"
    return sources


def location_problems(raw: dict[str, Any], settings, server, server_index: int | None,
                      object_name: str, tables: dict[str, dict]) -> list[tuple[str, str]]:
    """(YAML path, message) for every name or path of the contract that breaks the rules above.

    ``settings``: the validated gate settings; ``tables``: their resolved addresses
    (``environments.resolve_tables``)."""
    sources = table_sources(raw)
    problems: list[tuple[str, str]] = []
    if not IDENTIFIER.fullmatch(object_name or ""):
        problems.append(("schema[0].name", f"dataset name {object_name!r} names the target and its candidates: "
                                           f"it must be {IDENTIFIER_FORM}"))
    names = {"landing": settings.landing, "target": settings.target, "quarantine": settings.quarantine,
             "decisions": settings.decisions}
    for role, ref in names.items():
        if ref is not None and ref.table is not None:
            problems += _name_problems(ref.table, sources[role], role)
    problems += _name_problems(settings.candidate.schema_, sources["candidate_schema"], "candidate schema")
    if server is not None and server.catalog and server.schema_:
        problems += [(f"servers[{server_index}].{key}", message) for key, message in
                     (("catalog", _catalog_name_problem(server.catalog, "catalog")),
                      ("schema", _catalog_name_problem(server.schema_, "schema"))) if message]
    given_root = server.path if server is not None and server.path else None
    root_problem = _root_problem(given_root) if given_root is not None else None
    if root_problem:
        problems.append((f"servers[{server_index}].path", root_problem))
        return problems
    root = given_root or DEFAULT_ROOT
    if problems:
        return problems  # addresses built from bad names are not worth judging
    catalog = server.catalog if server is not None and server.catalog and server.schema_ else None
    addresses = {role: Address.as_written(tables[role]) for role in ("landing", *WRITTEN)}
    for role in WRITTEN:
        problem = _written_problem(addresses[role], role, _given_path(names.get(role)), root, catalog)
        if problem:
            problems.append((sources[role], problem))
    landing = landing_problem(addresses["landing"], _given_path(settings.landing), root)
    if landing:
        problems.append((sources["landing"], landing))
    problems += _overlaps(addresses, sources)
    problems += [(sources.get(role, role), message) for role, message in reserved_problems(tables, settings.candidate.schema_)]
    return problems


def _root_problem(root: str) -> str | None:
    """The server's root is where the gate writes: relative (to the gate's home), or a
    folder or URI the deployment lists in ``[contract_gate] roots`` (or one below it)."""
    if ".." in _segments(root):
        return f"server path {root!r} must not contain '..'"
    if _GLOB.search(root):
        return f"server path {root!r} {_GLOB_REASON}"
    if not (posixpath.isabs(root) or _URI.match(root)):
        return None
    if any(under(root, listed) or canonical(Address(kind="path", path=root)) == canonical(Address(kind="path", path=listed))
           for listed in config.get_list("roots")):
        return None
    return (f"server path {root!r} is absolute: the gate writes under it, so it must be relative (to "
            f"the gate's home, {config.describe('home')}) or under a root the deployment lists in "
            f"{config.describe('roots')}")


_GLOB_REASON = ("must not contain a glob character (* ? [ ] { } or a backslash): Spark would read every "
                "folder the pattern matches")


def _given_path(ref) -> str | None:
    return ref.path if ref is not None else None


def _name_problems(name: str, path: str, what: str) -> list[tuple[str, str]]:
    parts = name.split(".")
    if len(parts) <= 3 and all(IDENTIFIER.fullmatch(part) for part in parts):
        return []
    return [(path, f"{what} name {name!r} becomes a table name or a path: each of its (at most three) "
                   f"dot-separated parts must be {IDENTIFIER_FORM}")]


def _catalog_name_problem(name: str, what: str) -> str | None:
    """A server's catalog or schema is part of every table name the gate makes there, so it follows
    Unity Catalog's own rule for a name (at most 255 characters; no period, space, slash or
    control character) and holds no back-quote, the character that quotes it in SQL."""
    if len(name) <= 255 and not _CATALOG_NAME_REFUSED.search(name):
        return None
    return (f"{what} name {name!r} is part of every table name the gate makes on this server: at most 255 "
            "characters, without a period, space, slash, back-quote or control character")


def _segments(path: str) -> list[str]:
    return re.split(r"[/\\]", _URI.sub("", path, count=1))


def _written_problem(address: Address, role: str, given: str | None, root: str, catalog: str | None) -> str | None:
    what = _what(role)
    if not address.is_path:
        if catalog is not None and address.location.split(".")[0].lower() != catalog.lower():
            return f"the {what} {address.location!r} is outside the server's catalog {catalog!r}"
        return None
    if given is not None and ".." in _segments(given):
        return f"the {what} path {given!r} must not contain '..': the gate writes it, so it stays under the server's root"
    if given is not None and _GLOB.search(given):
        return f"the {what} path {given!r} {_GLOB_REASON}"
    path = address.location
    if not under(path, root):
        shown = repr(given) if given == path else f"{given or path!r} (resolved: {path!r})"
        return f"the {what} path {shown} is outside the server's root {root!r}: give a path relative to the root"
    if _leaves_through_link(path, root):
        return f"the {what} path {path!r} leads out of the server's root {root!r} through a symbolic link"
    return None


def landing_problem(address: Address, given: str | None, root: str) -> str | None:
    if not address.is_path:
        return None  # read with the gate principal's own grants; overlaps are checked below
    path = address.location
    if given is not None and ".." in _segments(given):
        return f"the landing path {given!r} must not contain '..'"
    if given is not None and _GLOB.search(given):
        return f"the landing path {given!r} {_GLOB_REASON}"
    roots = [root, *config.get_list("landing_roots")]
    # a link from one allowed root into another (lakehouse/landing -> /mnt/drops, listed) is fine
    if not any(under(path, r) for r in roots) or all(_leaves_through_link(path, r) for r in roots):
        allowed = " or ".join(repr(root) for root in roots)
        return (f"the landing path {given or path!r} is outside {allowed}: the gate only reads batches under the "
                f"server's root or a folder the deployment lists in {config.describe('landing_roots')}")
    return None


def _overlaps(tables: dict[str, Address], sources: dict[str, str]) -> list[tuple[str, str]]:
    """A contract's own tables are five different places, none inside another. The error goes
    to the setting that made the overlap: the landing (it reads), else the later table, unless
    only the other one was set explicitly."""
    roles = ("landing", *WRITTEN)
    tables = {**tables, "candidate_schema": candidate_schema(tables["candidate_schema"])}
    found = []
    for i, first in enumerate(roles):
        for second in roles[i + 1:]:
            if not same_or_nested(tables[first], tables[second]):
                continue
            blame, other = (first, second) if first == "landing" else (second, first)
            if sources[blame] == "schema[0].name" and sources[other] != "schema[0].name":
                blame, other = other, blame
            found.append((sources[blame], f"the {_what(blame)} {tables[blame].location} overlaps the contract's "
                                          f"own {_what(other)} {tables[other].location}: they must be different "
                                          "tables, neither inside the other"))
    return found


def _what(role: str) -> str:
    return "candidate folder" if role == "candidate_schema" else role


def canonical(address: Address) -> str:
    """What two addresses are compared by: a resolved, normalised path, or a lower-case name
    (catalog names are case-insensitive)."""
    if not address.is_path:
        return address.location.lower()
    path = address.resolved().location
    return path.rstrip("/") if _URI.match(path) else posixpath.normpath(path)


def same_or_nested(first: Address, second: Address) -> bool:
    """The same table, or one inside the other: a path in the other's folder, a table in the
    other's schema (the candidate schema is such a place)."""
    if first.kind != second.kind:
        return False
    a, b = canonical(first), canonical(second)
    separator = "/" if first.is_path else "."
    return a == b or a.startswith(b + separator) or b.startswith(a + separator)


def under(path: str, root: str) -> bool:
    """``path`` is strictly below ``root``, compared as resolved paths (URIs: same scheme and
    prefix; a relative and an absolute path resolve against the gate's home)."""
    if bool(_URI.match(path)) != bool(_URI.match(root)):
        return False
    if _URI.match(path):
        return path.startswith(root.rstrip("/") + "/") and ".." not in _segments(path)
    full, base = (canonical(Address(kind="path", path=p)) for p in (path, root))
    return full.startswith(base.rstrip("/") + "/")


def _leaves_through_link(path: str, root: str) -> bool:
    """A local ``path`` whose existing part resolves (symbolic links followed) outside ``root``."""
    if _URI.match(path):
        return False
    full, base = (Address(kind="path", path=p).resolved().location for p in (path, root))
    real, real_root = os.path.realpath(full), os.path.realpath(base)
    return not real.startswith(real_root.rstrip("/") + "/")
