"""A file's rows in one canonical form, whatever its format or writing: what the people of an upload are keyed on.

Every reader of a file of rows maps its cells through `canonical_column`: numbers as numbers, a column of two
words (true/false or yes/no in any case, or any two distinct words) coded 0/1. `rows_key` keys the table that
gives (core.privacy.population.content_key), so the same rows written as 0/1, -1/+1 or True/False labels, with
other column names or order, other row order, line endings, quoting, a byte-order mark or number formats, share
one key and so one budget. A file that cannot be put in this form (a missing cell, a column of three words) has no
key: it cannot be charged, and no digest of its bytes stands in.

`core.data.csvfile.canonical` puts a file's table (any format's) in this form. `earlier_key` is the key uploads
were charged under before it (kept, so that what was spent on a file then still counts against the same rows now:
core.privacy.population.Population.file).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from core.errors import DataError
from core.privacy.population import content_key

# Two-valued words a label may be written in, and their codes (one rule for the reader and the key).
LABEL_WORDS = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0}


def canonical_column(cells: Sequence[str]) -> NDArray[np.float64] | None:
    """A column's cells as numbers: every cell a finite number, as read; else at most two distinct words (stripped,
    any case) coded 0/1, by LABEL_WORDS where both are such words and in sorted order otherwise (content_key reads
    either coding alike); None when neither holds (an empty cell, a NaN, a third word)."""
    numbers = [_finite(c) for c in cells]
    if all(x is not None for x in numbers):
        return np.array(numbers, dtype=np.float64)
    words = [c.strip().casefold() for c in cells]
    found = sorted(set(words))
    if len(found) > 2 or "" in found:
        return None
    code = {w: LABEL_WORDS[w] for w in found} if set(found) <= set(LABEL_WORDS) else {w: float(i) for i, w in
                                                                                    enumerate(found)}
    return np.array([code[w] for w in words], dtype=np.float64)


def _finite(cell: str) -> float | None:
    try:
        x = float(cell.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def rows_key(table: NDArray[np.float64] | None) -> str:
    """The people's key of a canonical table (content_key), or "" for a file with none (it cannot be charged)."""
    return "" if table is None else content_key(table)


EARLIER_DIGITS = 9  # significant digits a column kept in the earlier key


def earlier_key(content: bytes, numbers: NDArray[np.float64] | None) -> str:
    """The key an upload was charged under before the canonical form: each column of its numbers (read with the first
    column as the response, so None for a file with a word in another column) mapped onto [0, 1] by its range,
    turned by its sorted values, rounded to EARLIER_DIGITS digits, columns and rows sorted; the SHA-256 of its bytes
    when it had no numbers."""
    if numbers is None:
        return hashlib.sha256(content).hexdigest()
    lo, hi = numbers.min(axis=0, initial=np.inf), numbers.max(axis=0, initial=-np.inf)
    span = np.where(hi > lo, hi - lo, 1.0)
    unit = np.round((numbers - lo) / span * 10**EARLIER_DIGITS).astype(np.int64)
    top = 10**EARLIER_DIGITS
    cols = []
    for j in range(unit.shape[1]):
        up, down = unit[:, j], np.where(hi[j] > lo[j], top - unit[:, j], 0)
        cols.append(up if _not_after(np.sort(up), np.sort(down)) else down)
    cols.sort(key=lambda c: np.sort(c).tobytes())
    table = np.stack(cols, axis=1) if cols else unit
    rows = table[np.lexsort(table.T[::-1])] if table.size else table
    h = hashlib.sha256(f"{table.shape[0]}x{table.shape[1]}".encode())
    h.update(np.ascontiguousarray(rows).tobytes())
    return h.hexdigest()


def _not_after(a: NDArray[np.int64], b: NDArray[np.int64]) -> bool:
    differ = np.flatnonzero(a != b)
    return differ.size == 0 or bool(a[differ[0]] < b[differ[0]])


def check_key(key: str, name: str) -> str:
    """A file's key, or DataError when it has none: nobody could tell whose budget a release on it spends."""
    if not key:
        raise DataError(f"{name} cannot be charged: its rows do not read as numbers and two-valued labels, so whose "
                        "budget a release would spend is unknown; load it for the reason, fix it and upload it again",
                        "data")
    return key
