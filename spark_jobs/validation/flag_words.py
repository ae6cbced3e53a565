"""Per-row flags (a rule failing, a filter selecting, a row broken) packed into bits of a few
longs, and counted by grouping the rows on those words.

Counting one flag costs one aggregate function, and Spark pays each aggregate function on every
row (about 20 ns here): 150 rules counted one ``count_if`` each cost more than reading the
batch. A batch raises few distinct sets of flags, though (most rows none, a bad row one or two),
so grouping the rows on their words gives a handful of groups: one hash lookup per row, whatever
the number of flags. ``read`` adds the groups' sizes up per bit on the driver, and counts the
broken rows (any error flag set) from the same groups. The engine groups on the words as a
grouping set of the same aggregate as the key set's group-by (``engine._aggregate``), so the
flags cost no pass of their own.

A batch crafted to raise more than ``FLAG_SETS`` distinct words is counted the plain way instead
(``totals``, one more aggregate), so no batch can make the driver collect one group per row.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, Row
from pyspark.sql import functions as F

CHUNK_FLAGS = 15
"""Flags per chunk: a chunk's predicates compile to a short function of generated code."""
CHUNKS_PER_WORD = 4
BROKEN_BIT = CHUNK_FLAGS * CHUNKS_PER_WORD  # in the last word; the sign bit is left alone
WORD = "__contract_gate_word{}"
FLAG_SETS = 10_000
"""Most distinct words the driver reads; past it the flags are counted by ``totals``."""


class FlagWords:
    """Named boolean columns (never NULL) as bits of long words, and whether a row is broken
    (an error flag set) as one bit more.

    The flags are packed in chunks of ``CHUNK_FLAGS``, and every chunk is used twice: in its
    word and in the broken bit. Spark's subexpression elimination then evaluates each chunk
    once, and in whole-stage generated code as a function of its own: without that, the
    predicates of a wide contract make one method longer than HotSpot compiles (8,000 bytes),
    and the JVM interprets the scan (benchmarks/RESULTS.md, "Validation engine").

    :param flags: each flag's name and its per-row boolean column, in bit order.
    :param errors: the flags that make a row broken (error-level row rules).
    """

    def __init__(self, flags: dict[str, Column], errors: list[str]) -> None:
        names = list(flags)
        self.flags = flags
        chunks = [names[i:i + CHUNK_FLAGS] for i in range(0, len(names), CHUNK_FLAGS)] or [[]]
        self.words = [chunks[i:i + CHUNKS_PER_WORD] for i in range(0, len(chunks), CHUNKS_PER_WORD)]
        self.names = [WORD.format(index) for index in range(len(self.words))]
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

    def read(self, groups: list[tuple[tuple[int, ...], int]]) -> dict[str, int]:
        """Each flag's count, the broken rows and all rows, from ``(words, rows)`` pairs: the
        distinct words of a batch and how many rows had them."""
        counts = dict.fromkeys(self.flags, 0)
        counts["broken"] = counts["rows"] = 0
        for words, rows in groups:
            counts["rows"] += rows
            if words[-1] >> BROKEN_BIT & 1:
                counts["broken"] += rows
            for name, word, bit in self._bits():
                if words[word] >> bit & 1:
                    counts[name] += rows
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
