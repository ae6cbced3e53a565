"""Per-row flags (a rule failing, a filter selecting, a row broken) packed into bits of a few
longs, and counted from the words of groups of rows.

Counting one flag costs one aggregate function, and Spark pays each aggregate function on every
row (about 20 ns here): 150 rules counted one ``count_if`` each cost more than reading the
batch. A batch raises few distinct sets of flags, though (most rows none, a bad row one or two),
so the words are read back as a handful of spans: ``read`` adds up, per bit, the rows of each
span on the driver, and counts the broken rows (any error flag set) from the same spans.

A span describes groups of rows by the bits all their rows share (``bit_and`` of each word)
and the bits any of them has (``bit_or``), with the groups' size class (1, 2, or 3 and more).
The engine's key group-by carries these two aggregates per key group, so the flags cost no
pass of their own (``key_passes``); a batch without a key groups its rows on the words
themselves (every span is exact, one row at a time). A bit that some but not all rows of a
group raise is exact in a group of two (one row has it); in a group of three or more it is not,
and ``read`` says so (``None``): the engine then counts the flags one aggregate function each
(``totals``, one more aggregate), as it does for a batch crafted to raise more than
``FLAG_SETS`` distinct spans, so no batch can make the driver collect one span per row.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

CHUNK_FLAGS = 15
"""Flags per chunk: a chunk's predicates compile to a short function of generated code."""
CHUNKS_PER_WORD = 4
BROKEN_BIT = CHUNK_FLAGS * CHUNKS_PER_WORD  # in the last word; the sign bit is left alone
WORD = "__contract_gate_word{}"
ALL = "__contract_gate_all{}"
ANY = "__contract_gate_any{}"
FLAG_SETS = 10_000
"""Most distinct spans the driver reads; past it the flags are counted by ``totals``."""


class FlagWords:
    """Named boolean columns (never NULL) as bits of long words, and whether a row is broken
    (an error flag set) as one bit more.

    The flags are packed in chunks of ``CHUNK_FLAGS``, and every chunk is used twice: in its
    word and in the broken bit. Spark's subexpression elimination then evaluates each chunk
    once, and in whole-stage generated code as a function of its own: without that, the
    predicates of a wide contract make one method longer than HotSpot compiles (8,000 bytes),
    and the JVM interprets the scan.

    :param flags: each flag's name and its per-row boolean column, in bit order.
    :param errors: the flags that make a row broken (error-level row rules).
    """

    def __init__(self, flags: dict[str, Column], errors: list[str]) -> None:
        names = list(flags)
        self.flags = flags
        chunks = [names[i:i + CHUNK_FLAGS] for i in range(0, len(names), CHUNK_FLAGS)] or [[]]
        self.words = [chunks[i:i + CHUNKS_PER_WORD] for i in range(0, len(chunks), CHUNKS_PER_WORD)]
        self.names = [WORD.format(index) for index in range(len(self.words))]
        self.all_names = [ALL.format(i) for i in range(len(self.words))]
        self.any_names = [ANY.format(i) for i in range(len(self.words))]
        self.errors = set(errors)

    def columns(self) -> list[Column]:
        """The words of a row: its chunks shifted into place, the broken bit in the last."""
        chunks = [[self._chunk(chunk) for chunk in word] for word in self.words]
        # every chunk is tested, even one whose mask is 0 (no error flag, always false): the
        # second use is what makes Spark compile the chunk as a function of its own
        broken = reduce(
            Column.__or__,
            [
                value.bitwiseAND(F.lit(self._error_mask(chunk))) != 0
                for word, values in zip(self.words, chunks)
                for chunk, value in zip(word, values)
            ],
        )
        columns = []
        for index, values in enumerate(chunks):
            word = reduce(
                Column.bitwiseOR,
                [F.shiftleft(value, CHUNK_FLAGS * position) for position, value in enumerate(values)],
            )
            if index == len(chunks) - 1:
                word = word.bitwiseOR(F.shiftleft(broken.cast("long"), BROKEN_BIT))
            columns.append(word.alias(self.names[index]))
        return columns

    def broken(self) -> Column:
        """TRUE for a row whose words have the broken bit set."""
        return F.col(self.names[-1]).bitwiseAND(F.lit(1 << BROKEN_BIT)) != 0

    def spans(self) -> list[Column]:
        """Aggregates over rows carrying the words: per word, the bits all rows share and the
        bits any row has (``all_names``, ``any_names``)."""
        return [F.bit_and(name).alias(shared) for name, shared in zip(self.names, self.all_names)] + [
            F.bit_or(name).alias(raised) for name, raised in zip(self.names, self.any_names)
        ]

    def read(self, spans: list[tuple[tuple[int, ...], tuple[int, ...], int, int, int]]) -> dict[str, int] | None:
        """Each flag's count, the broken rows and all rows, from ``(all, any, size class, rows,
        groups)`` spans: the words' shared and raised bits of the groups of one size class, how
        many rows and groups it holds. ``None`` when a bit raised by some rows of a group of
        three or more is not raised by all of them: those groups do not say how many rows."""
        counts = dict.fromkeys(self.flags, 0)
        counts["broken"] = counts["rows"] = 0
        bits = [*self._bits(), ("broken", len(self.words) - 1, BROKEN_BIT)]
        for shared, raised, size_class, rows, groups in spans:
            counts["rows"] += rows
            for name, word, bit in bits:
                if shared[word] >> bit & 1:
                    counts[name] += rows
                elif raised[word] >> bit & 1:
                    if size_class > 2:
                        return None
                    counts[name] += groups  # one row of each group of two
        return counts

    def totals(self) -> list[Column]:
        """The same counts as ``read``, one aggregate function each, over rows carrying the
        words."""
        return [
            F.count(F.lit(1)).alias("rows"),
            F.count_if(self.broken()).alias("broken"),
            *(
                F.count_if(F.col(self.names[word]).bitwiseAND(F.lit(1 << bit)) != 0).alias(name)
                for name, word, bit in self._bits()
            ),
        ]

    def _chunk(self, chunk: list[str]) -> Column:
        bits = [F.shiftleft(self.flags[name].cast("long"), bit) for bit, name in enumerate(chunk)]
        return reduce(Column.bitwiseOR, bits, F.lit(0).cast("long"))

    def _error_mask(self, chunk: list[str]) -> int:
        return sum(1 << bit for bit, name in enumerate(chunk) if name in self.errors)

    def _bits(self) -> list[tuple[str, int, int]]:
        """(flag, word index, bit) of every flag."""
        return [
            (name, index, CHUNK_FLAGS * position + bit)
            for index, word in enumerate(self.words)
            for position, chunk in enumerate(word)
            for bit, name in enumerate(chunk)
        ]
