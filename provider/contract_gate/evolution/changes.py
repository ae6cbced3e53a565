"""One change between two contract versions, and how far it reaches."""

from __future__ import annotations

import enum
import json
import unicodedata
from dataclasses import dataclass


class Impact(str, enum.Enum):
    """Breaking: a producer's batch that passed may now be rejected, or a consumer's read may
    fail. Non-breaking: every batch that passed still passes and every read still works.
    Informational: documentation only."""

    BREAKING = "breaking"
    NON_BREAKING = "non-breaking"
    INFORMATIONAL = "informational"


IMPACT_ORDER = (Impact.BREAKING, Impact.NON_BREAKING, Impact.INFORMATIONAL)


@dataclass(frozen=True)
class Change:
    impact: Impact
    object: str | None
    """The schema object it belongs to; None for the contract as a whole."""
    subject: str
    """What changed: ``column 'total'``, ``rule 'total.minimum'``, ``key``, or an ODCS path."""
    message: str

    def as_json(self) -> dict:
        return {"impact": self.impact.value, "object": self.object, "subject": self.subject, "message": self.message}


def worst(impacts) -> Impact:
    impacts = set(impacts)
    return next(impact for impact in IMPACT_ORDER if impact in impacts)


_SHOWN_CHARACTERS = 80


def shown(value) -> str:
    """A contract value for a message: JSON, shortened, with control and format characters
    (a right-to-left override, a zero-width space) escaped, since a contract is untrusted text."""
    text = escaped(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    return text if len(text) <= _SHOWN_CHARACTERS else text[:_SHOWN_CHARACTERS - 1] + "…"


def escaped(text: str) -> str:
    """``text`` with control and format characters written as ``\\uXXXX``."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
