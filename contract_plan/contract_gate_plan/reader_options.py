"""Which Spark reader options a contract may give a table: the parsing options of its format.

A landing's ``options`` go to Spark's ``DataFrameReader``, and Spark copies a reader's options
into the Hadoop configuration of that read. Left open, a producer could make the JVM load and
instantiate a class of its choosing (``fs.file.impl``), send the deployment's storage
credentials to a host of its own (``fs.s3a.endpoint``) or pick the code that provides them
(``fs.s3a.aws.credentials.provider``). Other options change what the candidate holds without a
word: ``mode: DROPMALFORMED`` drops the records the gate quarantines as ``record.parseable``;
``ignoreCorruptFiles``, ``ignoreMissingFiles``, ``modifiedBefore`` and ``modifiedAfter`` leave
files of the batch out depending on when and how it is read. So a table's options are the
documented parsing options of Spark's CSV, JSON and Parquet sources and ``pathGlobFilter`` /
``recursiveFileLookup`` (which files of the landing are the batch), compared as Spark compares
them, without regard to case; ``mode`` is ``PERMISSIVE`` or ``FAILFAST``; each value is at most
:data:`MAX_VALUE` characters. A Delta table takes none: the gate pins the version it reads.

The compiler reports a refused option at the table's ``options`` (``lint``); the Spark side checks
the plan again before any read (``contract_gate_plan.document``).
"""

from __future__ import annotations

from collections.abc import Mapping

_FILES = ("pathGlobFilter", "recursiveFileLookup")
_TEXT = ("encoding", "charset", "lineSep", "multiLine", "mode", "columnNameOfCorruptRecord", "dateFormat",
         "timestampFormat", "timestampNTZFormat", "enableDateTimeParsingFallback", "locale", "timeZone",
         "samplingRatio")
ALLOWED: dict[str, frozenset[str]] = {
    "csv": frozenset(name.lower() for name in (
        *_FILES, *_TEXT, "sep", "delimiter", "quote", "escape", "comment", "header", "inferSchema", "preferDate",
        "enforceSchema", "ignoreLeadingWhiteSpace", "ignoreTrailingWhiteSpace", "nullValue", "nanValue",
        "positiveInf", "negativeInf", "maxColumns", "maxCharsPerColumn", "charToEscapeQuoteEscaping", "emptyValue",
        "unescapedQuoteHandling")),
    "json": frozenset(name.lower() for name in (
        *_FILES, *_TEXT, "primitivesAsString", "prefersDecimal", "allowComments", "allowUnquotedFieldNames",
        "allowSingleQuotes", "allowNumericLeadingZeros", "allowBackslashEscapingAnyCharacter",
        "allowUnquotedControlChars", "dropFieldIfAllNull", "allowNonNumericNumbers")),
    "parquet": frozenset(name.lower() for name in (*_FILES, "mergeSchema", "datetimeRebaseMode", "int96RebaseMode")),
    "delta": frozenset(),
}
MODES = ("PERMISSIVE", "FAILFAST")
MAX_VALUE = 200


def option_problems(format: str, options: Mapping[str, object]) -> list[str]:
    """What is wrong with the reader ``options`` of a table in ``format``; empty when Spark may be
    given all of them."""
    allowed = ALLOWED.get(format)
    if allowed is None:
        return [f"format {format!r} is not one of {', '.join(ALLOWED)}"]
    problems = []
    seen: dict[str, str] = {}
    for name, value in options.items():
        key = str(name).lower()
        if key in seen:
            problems.append(f"option {name!r} is given twice ({seen[key]!r}): Spark compares option names "
                            "without regard to case")
        seen[key] = str(name)
        if key not in allowed:
            problems.append(f"option {name!r} is not a {format} reader option the gate passes on"
                            + (" (a Delta table takes none: the gate pins the version it reads)" if not allowed else
                               f"; the gate takes the parsing options of Spark's {format} source only, never "
                               "Hadoop or Spark settings"))
        elif not isinstance(value, str) or len(value) > MAX_VALUE:
            problems.append(f"option {name!r} must be a text of at most {MAX_VALUE} characters")
        elif key == "mode" and value.upper() not in MODES:
            problems.append(f"option 'mode' {value!r} would leave records of the batch out before the gate sees "
                            f"them; use {' or '.join(MODES)} (the gate quarantines a record it cannot parse)")
    return problems
