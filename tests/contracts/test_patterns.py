"""ECMA-262 patterns translated for Spark's Java RLIKE (contract_gate.contract.patterns), and the
contract errors for constructs whose meaning cannot be kept. What the translations match on real
Spark is proven in tests/spark/test_odcs_semantics.py; the expected matches there were taken from
an ECMA-262 engine (node, with and without the u flag) run on the same values."""

from __future__ import annotations

import pytest

from _contract_texts import column, compile_text, contract, issues_of, rule
from contract_gate.contract.patterns import MAX_NESTING, PatternError, to_java
from contract_gate_plan.cost_bounds import MAX_REGEX_LENGTH, MAX_REGEX_REPEAT

SPACES = r"\t\n\x{B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"


@pytest.mark.parametrize("ecma, java", [
    (r"^SKU-[0-9]{5}$", r"^SKU-[0-9]{5}\z"),  # $ is the end of the input
    (r"^a$|^b$", r"^a\z|^b\z"),
    (r"[$]\$", r"[$]\$"),  # a literal $ stays literal
    (r"a.b", r"a[^\n\r\x{2028}\x{2029}]b"),  # . excludes ECMA's four line terminators, not U+0085
    (r"\s", f"[{SPACES}]"),
    (r"\S", f"[^{SPACES}]"),
    (r"[\s,]", f"[{SPACES},]"),
    (r"[\s\S]", f"[{SPACES}[^{SPACES}]]"),
    (r"\d\D\w\W", r"\d\D\w\W"),  # ASCII in both
    (r"\bx\B", r"(?:(?<=\w)(?!\w)|(?<!\w)(?=\w))x(?:(?<=\w)(?=\w)|(?<!\w)(?!\w))"),
    (r"[\b]\v\0\cJ", r"[\x{8}]\x{B}\x{0}\x{A}"),
    (r"\x41\u00e9\uD83D\uDE00", "Aé\U0001F600"),
    (r"[]", r"[^\x{0}-\x{10FFFF}]"),  # matches nothing
    (r"[^]", r"[\x{0}-\x{10FFFF}]"),  # matches anything
    (r"[a-z&&[def]", r"[a-z\&\&\[def]"),  # literal & and [ in ECMA-262, intersection and nesting in Java
    (r"[\d\-_^]", r"[\d\-_\^]"),
    (r"(?<code>[A-Z]{2})-\1?", None),  # back-references are refused, see below
    (r"(?<code>[A-Z]{2})+", r"(?:[A-Z]{2})+"),  # a named group is not captured
    (r"(?:a|b)*?(?=c)(?!d)(?<=e)(?<!f{1,3})", r"(?:a|b)*?(?=c)(?!d)(?<=e)(?<!f{1,3})"),
    (r"\.\*\/\-", r"\.\*/-"),
    ("a\u202eb\u00a0", r"a\x{202E}b\x{A0}"),  # invisible characters are spelled out for review
])
def test_translation(ecma, java):
    if java is None:
        with pytest.raises(PatternError):
            to_java(ecma)
    else:
        assert to_java(ecma) == java


@pytest.mark.parametrize("ecma, message", [
    (r"^(a)\1$", "the back-reference \\1: back-references are not supported"),
    (r"\k<x>", "\\k: a named back-reference"),
    (r"a*+", "the possessive quantifier *+ is Java-only syntax"),
    (r"(?>a)", "the group '(?>'…: ECMA-262 has no inline flags, atomic groups or comments"),
    (r"(?i)abc", "the group '(?i'…: ECMA-262 has no inline flags"),
    (r"\Aabc\z", "\\A: an anchor of Java/Python; write ^"),
    (r"abc\z", "\\z: an anchor of Java; $ already means the end of the input here"),
    (r"abc\Z", "\\Z: an anchor of Java/Python"),
    (r"\Q.\E", "\\Q: Java quoting"),
    (r"\p{L}+", "\\p: a Unicode property, which ECMA-262 knows only with the u flag"),
    (r"\h", "\\h: a Java class"),
    (r"\y", "\\y: not an ECMA-262 escape; write the letter without \\"),
    (r"\u{41}", "\\u{…} needs the u flag"),
    (r"\x4", "\\x needs two hex digits"),
    (r"\012", "a legacy octal escape"),
    (r"[\1]", "\\1 inside a class (a legacy octal escape)"),
    (r"\c1", "\\c must be followed by a letter A-Z"),
    (r"a{", "a '{' that is not a quantifier: escape it as \\{"),
    (r"a}", "a lone '}': escape it as \\}"),
    (r"a]", "a lone ']': escape it as \\]"),
    (r"*a", "nothing to repeat before '*'"),
    (r"^*", "nothing to repeat: '^' cannot take a quantifier"),
    (r"\b+", "nothing to repeat"),
    (r"(?=a)*", "nothing to repeat: '(?=a)' cannot take a quantifier"),
    (r"a**", "nothing to repeat: a quantifier follows *"),
    (r"a{3,2}", "the quantifier {3,2} has its numbers out of order"),
    (f"a{{{MAX_REGEX_REPEAT + 1}}}", f"a regular expression repetition count {MAX_REGEX_REPEAT + 1} is above "
                                     f"the bound {MAX_REGEX_REPEAT}"),
    (f"a{{1,{MAX_REGEX_REPEAT + 1}}}", f"repetition count {MAX_REGEX_REPEAT + 1} is above the bound"),
    (r"(?<=a+)b", "the quantifier + inside a look-behind: Java needs look-behinds of bounded length"),
    (r"(?<=(?:ab)*)c", "the quantifier * inside a look-behind"),
    (r"[z-a]", "the range 'z'-'a' is out of order"),
    (r"[\d-z]", "a range with a class escape (like \\d-z) at one end"),
    (r"[^\S]", "\\S inside a negated class"),
    (r"(?<1x>a)", "a group name must be an ASCII identifier"),
    (r"(?<x>a)(?<x>b)", "the group name 'x' is used twice"),
    (r"(ab", "a group that is never closed (at character 1 of the pattern)"),
    (r"ab)", "unmatched ')' (at character 3 of the pattern)"),
    (r"[ab", "a character class that is never closed"),
    ("ab\\", "a pattern cannot end with a single \\"),
    ("\ud800", "a lone surrogate U+D800"),
    ("", "pattern must be a non-empty string"),
    # a hostile contract must get a contract error, not crash lint or an executor's stack
    ("(" * (MAX_NESTING + 1) + ")" * (MAX_NESTING + 1), f"groups nested more than {MAX_NESTING} deep"),
    ("(" * 100000, f"a regular expression of 100000 characters is above the bound {MAX_REGEX_LENGTH}"),
    ("." * 1000, f"characters is above the bound {MAX_REGEX_LENGTH} in the Java form Spark runs"),
])
def test_refused_constructs_are_named(ecma, message):
    with pytest.raises(PatternError) as refused:
        to_java(ecma)
    assert message in str(refused.value)


def test_the_translation_is_the_predicate_of_every_pattern_rule():
    """logicalTypeOptions.pattern, invalidValues' arguments.pattern and DQX regex_match: one text."""
    quality = """\
- metric: invalidValues
  arguments: {pattern: '^SKU-\\d{5}$'}
  mustBe: 0
- type: custom
  engine: dqx
  implementation:
    check: {function: regex_match, arguments: {regex: '^SKU-\\d{5}$'}}
"""
    plan = compile_text(contract(column("sku", "string", "string", logicalTypeOptions="{pattern: '^SKU-\\d{5}$'}",
                                        quality=quality)))
    expected = "(`sku` IS NULL OR `sku` RLIKE '^SKU-\\\\d{5}\\\\z')"
    assert [rule(plan, i)["predicate"] for i in ("sku.pattern", "sku.invalidValues", "sku.regex_match")] == [expected] * 3
    assert all(rule(plan, i)["enforceable"] for i in ("sku.pattern", "sku.invalidValues", "sku.regex_match"))


def test_a_refused_pattern_is_a_contract_error_at_its_yaml_path():
    quality = """\
- metric: invalidValues
  arguments: {pattern: 'a*+'}
  mustBe: 0
- type: custom
  engine: dqx
  implementation:
    check: {function: regex_match, arguments: {regex: '\\p{Lu}'}}
"""
    text = contract(column("v", "string", "string", logicalTypeOptions="{pattern: '^(?i)abc$'}", quality=quality))
    assert issues_of(text) == [
        ("schema[0].properties[0].logicalTypeOptions.pattern",
         "the group '(?i'…: ECMA-262 has no inline flags, atomic groups or comments; use (?:…), (?=…), (?!…), "
         "(?<=…) or (?<!…) (at character 2 of the pattern)"),
        ("schema[0].properties[0].quality[0].arguments.pattern",
         "the possessive quantifier *+ is Java-only syntax (at character 3 of the pattern)"),
        ("schema[0].properties[0].quality[1].implementation.check.arguments.regex",
         "'regex': \\p: a Unicode property, which ECMA-262 knows only with the u flag (ODCS patterns have no "
         "flags); list the characters or ranges in a class (at character 1 of the pattern)"),
    ]


def test_a_hostile_pattern_stays_inside_its_string_literal():
    """A quote or backslash in a pattern cannot end the SQL string literal of the predicate."""
    plan = compile_text(contract(column("v", "string", "string",
                                        logicalTypeOptions="{pattern: 'x''\\) OR TRUE OR \\(''\\\\'}")))
    # the pattern x'\) OR TRUE OR \('\\ : every quote and backslash escaped inside one literal
    assert rule(plan, "v.pattern")["predicate"] == "(`v` IS NULL OR `v` RLIKE 'x\\'\\\\) OR TRUE OR \\\\(\\'\\\\\\\\')"
