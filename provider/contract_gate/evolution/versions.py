"""The version bump a change needs: any change a new version, a breaking one a new major.

Versions are read as semantic versions (``1.2.3``, ``v1.2.3``, ``1.2.3-rc.1+build``); a version
that is not one can only be told apart from another, so any change needs a different string.
"""

from __future__ import annotations

import re

_SEMVER = re.compile(r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?")


def semver(version) -> tuple | None:
    """A sort key of a semantic version (pre-releases before their release), or None."""
    match = _SEMVER.fullmatch(str(version))
    if not match:
        return None
    major, minor, patch, pre = match.groups()
    # a release sorts after its pre-releases; numeric identifiers before alphanumeric ones
    pre_key = (1,) if pre is None else (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")))
    return int(major), int(minor), int(patch), pre_key


def bump_problems(old: str, new: str, changed: bool, breaking: bool) -> list[str]:
    """What is wrong with going from version ``old`` to ``new`` ([] when nothing)."""
    if not changed:
        return []
    before, after = semver(old), semver(new)
    if before is None or after is None:
        if str(old) == str(new):
            return [f"the contract changed but its version did not ({old}); give it a new version"]
        return []
    problems = []
    if after <= before:
        problems.append(f"the contract changed, so its version must go up: {old} -> {new}")
    if breaking and after[0] <= before[0]:
        problems.append(f"a breaking change needs a new major version: {old} -> {new} (e.g. {before[0] + 1}.0.0)")
    return problems
