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

BITS_PER_WORD = 63  # the sign bit is left alone: a word is never negative
WORD = "__contract_gate_word{}"
FLAG_SETS = 10_000
"""Most distinct words the driver reads; past it the flags are counted by ``totals``."""


class FlagWords:
    """Named boolean columns (never NULL) as bits of ``BITS_PER_WORD``-bit words.

    :param flags: each flag's name and its per-row boolean column, in bit order.
    :param errors: the flags that make a row broken (error-level row rules).
    """

    def __init__(self, flags: dict[str, Column], errors: list[str]) -> None:
        names = list(flags)
        self.flags = flags
        self.chunks = [names[i:i + BITS_PER_WORD] for i in range(0, len(names), BITS_PER_WORD)]
        self.names = [WORD.format(index) for index in range(len(self.chunks))]
        self.error_masks = [
            sum(1 << bit for bit, name in enumerate(chunk) if name in errors) for chunk in self.chunks
        ]

    def columns(self) -> list[Column]:
        """The words of a row, each a bitwise OR of its flags shifted into place."""
        return [
            reduce(
                Column.bitwiseOR,
                [F.shiftleft(self.flags[name].cast("long"), bit) for bit, name in enumerate(chunk)],
            ).alias(word)
            for word, chunk in zip(self.names, self.chunks)
        ]

    def broken(self) -> Column:
        """TRUE for a row whose words have an error flag set: bit tests, not predicates."""
        tests = [
            F.col(word).bitwiseAND(F.lit(mask)) != 0
            for word, mask in zip(self.names, self.error_masks)
            if mask
        ]
        return reduce(Column.__or__, tests, F.lit(False))

    def read(self, groups: list[tuple[tuple[int, ...], int]]) -> dict[str, int]:
        """Each flag's count, the broken rows and all rows, from ``(words, rows)`` pairs: the
        distinct words of a batch and how many rows had them."""
        counts = dict.fromkeys(self.flags, 0)
        counts["broken"] = counts["rows"] = 0
        for words, rows in groups:
            counts["rows"] += rows
            if any(word & mask for word, mask in zip(words, self.error_masks)):
                counts["broken"] += rows
            for word, chunk in zip(words, self.chunks):
                for bit, name in enumerate(chunk):
                    if word >> bit & 1:
                        counts[name] += rows
        return counts

    def totals(self) -> list[Column]:
        """The same counts as ``read``, one aggregate function each, over rows carrying the
        words."""
        tests = [
            (name, F.col(word).bitwiseAND(F.lit(1 << bit)) != 0)
            for word, chunk in zip(self.names, self.chunks)
            for bit, name in enumerate(chunk)
        ]
        return [
            F.count(F.lit(1)).alias("rows"),
            F.count_if(self.broken()).alias("broken"),
            *(F.count_if(test).alias(name) for name, test in tests),
        ]
