"""ODCS patterns (ECMA-262 regular expressions) rewritten for Spark's ``RLIKE`` (Java regex).

ODCS says a ``pattern`` is an ECMA-262 regular expression; Spark evaluates ``RLIKE`` with
``java.util.regex``, a search (``Matcher.find``) without flags. The two dialects read several
everyday constructs differently, so the contract's text cannot be handed to Spark as it is:

* ``$``: ECMA-262 (no multiline flag) matches only at the end of the input; Java's ``$`` also
  matches before a final line terminator, so ``'SKU-12345\\n'`` would pass ``^SKU-[0-9]{5}$``.
  It becomes Java's ``\\z``.
* ``.``: ECMA-262 excludes exactly ``\\n``, ``\\r``, U+2028 and U+2029; Java also excludes U+0085.
* ``\\s`` / ``\\S``: ECMA-262 includes the Unicode space separators and U+FEFF; Java's ``\\s`` is
  ASCII only.
* ``\\b`` / ``\\B``: ECMA-262 judges word characters by ``\\w`` (ASCII); Java before 19 judges
  ``\\b`` by Unicode letters. Both become look-arounds on ``\\w``.
* ``\\v`` is U+000B in ECMA-262 and a class of vertical whitespace in Java; ``\\0`` is NUL in
  ECMA-262 and an octal prefix in Java; ``[\\b]`` is a backspace.
* Inside a class, ``[`` and ``&&`` are literal characters in ECMA-262 but nesting and
  intersection in Java; they are escaped.
* ``[]`` matches nothing and ``[^]`` any character in ECMA-262; Java refuses both.

``^``, ``\\d``, ``\\D``, ``\\w``, ``\\W``, groups, alternation, look-aheads and greedy or lazy
quantifiers mean the same in both and are kept. Characters are Unicode code points, as with
ECMA-262's ``u`` flag (which JSON Schema recommends): ``.`` matches one emoji, not half of one.

Constructs whose meaning cannot be kept, or that mean one thing in ECMA-262 and another in Java,
are refused with a message naming them: back-references, Java-only syntax (possessive
quantifiers, atomic groups, inline flags, ``\\A`` ``\\z`` ``\\Q`` ``\\p{..}``...), a ``{`` or ``]``
that is not part of a quantifier or class (Annex B reads it as a literal, the ``u`` flag as an
error: escape it), an unbounded look-behind (Java refuses it). The translation is the only way a
pattern reaches Spark: validation, the Delta CHECK constraint and DQX ``regex_match`` all use
:func:`rlike`.
"""

from __future__ import annotations

import unicodedata

from contract_gate_plan.cost_bounds import length_problem, regex_problem, repeat_problem
from contract_gate_plan.sql_text import string_literal

# ECMA-262 WhiteSpace and LineTerminator (the members of \s), as Java class items.
_ECMA_SPACES = r"\t\n\x{B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"
_ECMA_DOT = r"[^\n\r\x{2028}\x{2029}]"
_WORD_BOUNDARY = r"(?:(?<=\w)(?!\w)|(?<!\w)(?=\w))"
_NOT_WORD_BOUNDARY = r"(?:(?<=\w)(?=\w)|(?<!\w)(?!\w))"
_NOTHING = r"[^\x{0}-\x{10FFFF}]"
_ANYTHING = r"[\x{0}-\x{10FFFF}]"
_SYNTAX = set("^$\\.*+?()[]{}|")
_CLASS_SPECIAL = set("\\[]^-&")
_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
# Escapes other dialects know and ECMA-262 does not, with what to write instead.
_FOREIGN_ESCAPES = {
    "A": "an anchor of Java/Python; write ^",
    "z": "an anchor of Java; $ already means the end of the input here",
    "Z": "an anchor of Java/Python; $ already means the end of the input here",
    "G": "a Java anchor with no ECMA-262 meaning",
    "Q": "Java quoting; escape each special character with \\ instead",
    "E": "Java quoting; escape each special character with \\ instead",
    "p": "a Unicode property, which ECMA-262 knows only with the u flag (ODCS patterns have no flags); "
         "list the characters or ranges in a class",
    "P": "a Unicode property, which ECMA-262 knows only with the u flag (ODCS patterns have no flags); "
         "list the characters or ranges in a negated class",
    "k": "a named back-reference; back-references are not supported",
    "h": "a Java class; write [ \\t] or the characters you mean",
    "H": "a Java class; write the characters you mean in a negated class",
    "R": "a Java line-break matcher; write (?:\\r\\n|[\\n\\r])",
    "X": "a Java grapheme matcher with no ECMA-262 meaning",
    "e": "a Java escape; write \\x1B",
    "a": "a Java escape; write \\x07",
}
# Java compiles and matches nested groups recursively (a deep nest overflows an executor's stack).
MAX_NESTING = 50


class PatternError(ValueError):
    """A pattern the gate cannot run with its ECMA-262 meaning; the message names the construct."""


def rlike(column_sql: str, pattern: str) -> str:
    """``<column> RLIKE '<pattern in Java>'``: the one predicate text for an ODCS/DQX pattern."""
    return f"{column_sql} RLIKE {string_literal(to_java(pattern))}"


def to_java(pattern: str) -> str:
    """The Java regex that searches like the ECMA-262 ``pattern`` does. Raises PatternError."""
    if not isinstance(pattern, str) or not pattern:
        raise PatternError("pattern must be a non-empty string")
    if problem := length_problem(len(pattern)):
        raise PatternError(problem)
    java = _Translator(pattern).translate()
    if problem := regex_problem(java):  # as contract SQL's regexes are bounded: on the text Spark runs
        raise PatternError(f"{problem} in the Java form Spark runs (ECMA-262's ., \\s and \\b each "
                           "become a class of up to 90 characters)")
    return java


def _literal(code: int, in_class: bool = False) -> str:
    """One character as Java reads it literally (``in_class``: inside a character class)."""
    char = chr(code)
    if 0xD800 <= code <= 0xDFFF:
        raise PatternError(f"a lone surrogate U+{code:04X} cannot be matched in a Spark string")
    if char.isascii() and (char.isalnum() or char == " "):
        return char
    if char.isascii() and char.isprintable():
        special = _CLASS_SPECIAL if in_class else _SYNTAX
        return "\\" + char if char in special else char
    if unicodedata.category(char)[0] in "CZ":  # controls, format, separators: visible in review
        return f"\\x{{{code:X}}}"
    return char


class _Translator:
    """A recursive-descent reader of one ECMA-262 pattern that writes its Java equivalent."""

    def __init__(self, pattern: str):
        self.text = pattern
        self.pos = 0
        self.out: list[str] = []
        self.lookbehind = 0  # nesting depth of look-behinds (Java needs them bounded)
        self.depth = 0  # nesting depth of groups
        self.group_names: set[str] = set()

    # -- reading ---------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def refuse(self, what: str, at: int | None = None) -> PatternError:
        where = self.pos if at is None else at
        return PatternError(f"{what} (at character {where + 1} of the pattern)")

    def translate(self) -> str:
        self.disjunction()
        if self.pos < len(self.text):  # only an unmatched ")" stops a disjunction early
            raise self.refuse("unmatched ')'")
        return "".join(self.out)

    def disjunction(self) -> None:
        self.alternative()
        while self.peek() == "|":
            self.out.append("|")
            self.pos += 1
            self.alternative()

    def alternative(self) -> None:
        while self.peek() not in ("", "|", ")"):
            start = self.pos
            quantifiable = self.term()
            if self.peek() in ("*", "+", "?", "{") and self.quantifier_ahead():
                if not quantifiable:
                    raise self.refuse(f"nothing to repeat: {self.text[start:self.pos]!r} cannot take a quantifier")
                self.quantifier()

    # -- terms -----------------------------------------------------------------------------
    def term(self) -> bool:
        """Translate one assertion or atom; True when a quantifier may follow it."""
        char = self.peek()
        if char == "^":
            self.emit("^", 1)
            return False
        if char == "$":
            self.emit(r"\z", 1)
            return False
        if char == ".":
            self.emit(_ECMA_DOT, 1)
            return True
        if char == "[":
            self.character_class()
            return True
        if char == "(":
            return self.group()
        if char == "\\":
            return self.atom_escape()
        if char in "*+?":
            raise self.refuse(f"nothing to repeat before {char!r}")
        if char == "{":
            raise self.refuse("a '{' that is not a quantifier: escape it as \\{")
        if char in "}]":
            raise self.refuse(f"a lone {char!r}: escape it as \\{char}")
        self.emit(_literal(ord(char)), 1)
        return True

    def emit(self, text: str, consumed: int) -> None:
        self.out.append(text)
        self.pos += consumed

    def group(self) -> bool:
        start = self.pos
        head = self.text[self.pos:self.pos + 4]
        lookbehind = head in ("(?<=", "(?<!")
        if lookbehind:
            opener = java = head
        elif head.startswith(("(?:", "(?=", "(?!")):
            opener = java = head[:3]
        elif head.startswith("(?<"):
            opener, java = self.named_group(), "(?:"
        elif head.startswith("(?"):
            raise self.refuse(f"the group {head[:3]!r}…: ECMA-262 has no inline flags, atomic groups or "
                              "comments; use (?:…), (?=…), (?!…), (?<=…) or (?<!…)")
        else:
            opener = java = "("
        self.emit(java, len(opener))
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.refuse(f"groups nested more than {MAX_NESTING} deep", start)
        self.lookbehind += lookbehind
        self.disjunction()
        self.lookbehind -= lookbehind
        self.depth -= 1
        if self.peek() != ")":
            raise self.refuse("a group that is never closed", start)
        self.emit(")", 1)
        # A quantified look-around is an error with the u flag (Annex B allows look-aheads only).
        return java in ("(", "(?:")

    def named_group(self) -> str:
        """The ``(?<name>`` text at ``pos``. It is written as ``(?:``: nothing reads captures, and
        Java's group names are narrower than ECMA-262's."""
        end = self.text.find(">", self.pos + 3)
        name = self.text[self.pos + 3:end] if end > 0 else ""
        if not name or not all(c.isascii() and (c.isalnum() or c in "_$") for c in name) or name[0].isdigit():
            raise self.refuse("a group name must be an ASCII identifier: (?<name>…)")
        if name in self.group_names:
            raise self.refuse(f"the group name {name!r} is used twice")
        self.group_names.add(name)
        return self.text[self.pos:end + 1]

    # -- escapes outside classes -------------------------------------------------------------
    def atom_escape(self) -> bool:
        letter = self.peek(1)
        if letter == "":
            raise self.refuse("a pattern cannot end with a single \\")
        if letter in "dDwW":
            self.emit("\\" + letter, 2)
        elif letter == "s":
            self.emit(f"[{_ECMA_SPACES}]", 2)
        elif letter == "S":
            self.emit(f"[^{_ECMA_SPACES}]", 2)
        elif letter == "b":
            self.emit(_WORD_BOUNDARY, 2)
            return False
        elif letter == "B":
            self.emit(_NOT_WORD_BOUNDARY, 2)
            return False
        elif letter.isdigit() and letter != "0":
            raise self.refuse(f"the back-reference \\{letter}: back-references are not supported "
                              "(ECMA-262 and Java disagree on groups that did not match)")
        else:
            self.out.append(_literal(self.character_escape()))
        return True

    def character_escape(self) -> int:
        """The code point of a character escape at ``pos`` (``\\n``, ``\\x41``, ``\\u00e9``, ``\\.``…)."""
        start, letter = self.pos, self.peek(1)
        self.pos += 2
        if letter in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[letter]
        if letter == "0":
            if self.peek().isdigit():
                raise self.refuse("a legacy octal escape \\0…: write \\x.. or \\u....", start)
            return 0
        if letter == "c":
            control = self.peek()
            if not (control.isascii() and control.isalpha()):
                raise self.refuse("\\c must be followed by a letter A-Z", start)
            self.pos += 1
            return ord(control) % 32
        if letter == "x":
            return self.hex_digits(2, start, "\\x needs two hex digits")
        if letter == "u":
            if self.peek() == "{":
                raise self.refuse("\\u{…} needs the u flag, which ODCS patterns do not have: write \\uXXXX", start)
            code = self.hex_digits(4, start, "\\u needs four hex digits")
            if 0xD800 <= code <= 0xDBFF and self.text[self.pos:self.pos + 2] == "\\u":
                saved = self.pos
                self.pos += 2
                low = self.hex_digits(4, start, "\\u needs four hex digits")
                if 0xDC00 <= low <= 0xDFFF:
                    return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                self.pos = saved
            return code
        if letter.isascii() and letter.isalnum():
            hint = _FOREIGN_ESCAPES.get(letter, "not an ECMA-262 escape; write the letter without \\")
            raise self.refuse(f"\\{letter}: {hint}", start)
        return ord(letter)  # an identity escape: the character itself (\. \/ \- \é…)

    def hex_digits(self, count: int, start: int, message: str) -> int:
        digits = self.text[self.pos:self.pos + count]
        if len(digits) != count or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.refuse(message, start)
        self.pos += count
        return int(digits, 16)

    # -- quantifiers -------------------------------------------------------------------------
    def quantifier_ahead(self) -> bool:
        """A ``{`` starts a quantifier only as ``{n}``, ``{n,}`` or ``{n,m}`` (else it is refused)."""
        return self.peek() != "{" or self.braced_bounds() is not None

    def braced_bounds(self) -> tuple[int, int | None, int] | None:
        """(min, max or None, length) of a ``{n[,[m]]}`` at ``pos``, or None."""
        end = self.text.find("}", self.pos)
        if end < 0:
            return None
        body = self.text[self.pos + 1:end]
        low, comma, high = body.partition(",")
        if not low.isascii() or not low.isdigit() or (high and not (high.isascii() and high.isdigit())):
            return None
        return int(low), (int(high) if high else None) if comma else int(low), end + 1 - self.pos

    def quantifier(self) -> None:
        start, char = self.pos, self.peek()
        if char == "{":
            bounds = self.braced_bounds()
            if bounds is None:  # quantifier_ahead() comes first, so this would be a caller's bug
                raise self.refuse("a '{' that is not a quantifier: escape it as \\{")
            low, high, length = bounds
            if high is not None and high < low:
                raise self.refuse(f"the quantifier {{{low},{high}}} has its numbers out of order")
            if problem := repeat_problem(max(low, high or 0)):
                raise self.refuse(problem)
            unbounded = high is None
            text = self.text[self.pos:self.pos + length]
        else:
            unbounded, text, length = char in "*+", char, 1
        if unbounded and self.lookbehind:
            raise self.refuse(f"the quantifier {text} inside a look-behind: Java needs look-behinds "
                              "of bounded length (use {n,m})", start)
        self.emit(text, length)
        if self.peek() == "?":  # lazy, the same in both
            self.emit("?", 1)
        following = self.peek()
        if following == "+":
            raise self.refuse(f"the possessive quantifier {self.text[start:self.pos]}+ is Java-only syntax")
        if following in ("*", "?") or (following == "{" and self.braced_bounds() is not None):
            raise self.refuse(f"nothing to repeat: a quantifier follows {self.text[start:self.pos]}")

    # -- character classes -------------------------------------------------------------------
    def character_class(self) -> None:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        self.pos += negated
        items: list[str] = []
        not_spaces = False  # the class holds \S
        while True:
            char = self.peek()
            if char == "":
                raise self.refuse("a character class that is never closed", start)
            if char == "]":
                self.pos += 1
                break
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                hyphen = self.pos
                self.pos += 1
                high = self.class_atom()
                if not isinstance(low, int) or not isinstance(high, int):
                    raise self.refuse("a range with a class escape (like \\d-z) at one end: escape the "
                                      "hyphen as \\- if it is meant literally", hyphen)
                if high < low:
                    raise self.refuse(f"the range {chr(low)!r}-{chr(high)!r} is out of order", hyphen)
                items.append(f"{_literal(low, True)}-{_literal(high, True)}")
            elif low == "S":
                not_spaces = True
            else:
                items.append(low if isinstance(low, str) else _literal(low, True))
        if not items and not not_spaces:
            self.out.append(_ANYTHING if negated else _NOTHING)
            return
        if not_spaces and negated:
            raise self.refuse("\\S inside a negated class: write the class without it (a negated \\S is \\s)", start)
        nested = f"[^{_ECMA_SPACES}]" if not_spaces else ""
        self.out.append(f"[{'^' if negated else ''}{''.join(items)}{nested}]")

    def class_atom(self) -> int | str:
        """One class member: a code point, or Java class text (``\\d``, the \\s items); ``"S"``
        stands for ``\\S``."""
        char = self.peek()
        if char != "\\":
            self.pos += 1
            if char == "[":
                return ord("[")  # literal in ECMA-262; _literal escapes it for Java
            return ord(char)
        letter = self.peek(1)
        if letter in ("d", "D", "w", "W"):
            self.pos += 2
            return "\\" + letter
        if letter == "s":
            self.pos += 2
            return _ECMA_SPACES
        if letter == "S":
            self.pos += 2
            return "S"
        if letter == "b":
            self.pos += 2
            return 0x08
        if letter == "-":
            self.pos += 2
            return ord("-")
        if letter.isdigit() and letter != "0":
            raise self.refuse(f"\\{letter} inside a class (a legacy octal escape): write \\x.. or \\u....")
        if letter == "B":
            raise self.refuse("\\B inside a class: not an ECMA-262 escape; write B without \\")
        return self.character_escape()
