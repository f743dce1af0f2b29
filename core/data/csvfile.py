"""A user's CSV file: a header, a response column (label or response; `y` unless another is named), every other
column a numeric feature.

Every format a user's file may come in (core.data.formats) is read into the same `Table` and ends in the same
`table_dataset` (the response column, the features, one message naming every offending cell) and `canonical` (the
rows the people's key is made of), so a file's format changes neither what is fitted nor whose budget it spends."""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.data.dataset import Dataset
from core.data.rows import LABEL_WORDS, canonical_column
from core.errors import DataError


def read_csv(path: str | os.PathLike, response: str = "y") -> Dataset:
    """Read FILE.csv into a Dataset, `response` its label or response column; any defect is a DataError that names
    the row and column."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file not found: {path}; check the path passed to {{data}}", setting="data")
    return _parse(path.read_text(encoding="utf-8-sig"), str(path), response)


def read_csv_bytes(content: bytes, name: str, response: str = "y") -> Dataset:
    """The same for an uploaded file's bytes."""
    return _parse(decode(content, name), name, response)


DELIMITERS = (",", ";", "\t", "|")  # the first wins a tie


def delimiter(text: str) -> str:
    """A CSV's delimiter: of DELIMITERS, the one that splits its header line into the most names."""
    first = text.split("\n", 1)[0]
    return max(DELIMITERS, key=lambda d: len(next(csv.reader([first], delimiter=d), [])))


def header(content: bytes, name: str) -> list[str]:
    """A CSV's column names, stripped (DataError for a file that is not text or has no header)."""
    text = decode(content, name)
    names = next(csv.reader(io.StringIO(text), delimiter=delimiter(text)), None)
    if not names or not any(h.strip() for h in names):
        raise DataError(f"{name} is empty; it needs a header line naming its columns")
    return [h.strip() for h in names]


def decode(content: bytes, name: str) -> str:
    """A file's bytes as text (UTF-8, a byte-order mark dropped); DataError for a file that is not text."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name} is not a text CSV file") from None


@dataclass(frozen=True)
class Table:
    """A file's columns as its reader found them, before any is checked: the one form every format's reader gives
    (this module for a CSV, core.data.formats for the others), from which both the Dataset (table_dataset) and the
    people's key (canonical) are made, so that no format has rules of its own."""

    names: tuple[str, ...]
    # each column's numbers (NaN where a cell is missing), or its cells as text ("" where one is empty)
    columns: tuple[np.ndarray | tuple[str, ...], ...]
    rows: tuple[int, ...] | None = None  # each row's number in the file when some were skipped (else 1, 2, ...)
    short: tuple[tuple[int, int], ...] = ()  # a CSV's rows with another number of cells: (row, cells)
    nan: str = "missing"  # what a NaN among numbers is: a missing cell, or (a CSV's written "nan") "nonfinite"

    @property
    def n(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def csv_columns(text: str, label: str, response: str = "y") -> Table:
    """A CSV's text as a Table (DataError for a file with no header)."""
    sep = delimiter(text)
    header = next(csv.reader(io.StringIO(text), delimiter=sep), None)
    if not header or not any(h.strip() for h in header):
        raise DataError(f"{label} is empty; it needs a header line with a column named {response}")
    names = tuple(h.strip() for h in header)
    try:
        with warnings.catch_warnings():  # a header-only file is reported by table_dataset, in words
            warnings.simplefilter("ignore", UserWarning)
            data = np.loadtxt(io.StringIO(text), delimiter=sep, skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError:
        data = None
    if data is not None and data.shape[0] == 0:
        return Table(names, tuple(np.empty(0) for _ in names))
    if data is not None and data.shape[1] == len(names):
        return Table(names, tuple(data[:, j] for j in range(len(names))), nan="nonfinite")
    return _cells(text, names, sep)


def _cells(text: str, names: tuple[str, ...], sep: str) -> Table:
    """The careful reader behind the fast one: every cell as text, rows of another length set aside (blank lines
    skipped), so that table_dataset can name every offending cell."""
    rows, numbers, short = [], [], []
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    next(reader)
    for r, cells in enumerate(reader, start=1):
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            short.append((r, len(cells)))
            continue
        rows.append(cells)
        numbers.append(r)
    columns = tuple(zip(*rows, strict=True)) if rows else tuple(() for _ in names)
    return Table(names, columns, tuple(numbers), tuple(short))


def canonical(table: Table) -> np.ndarray | None:
    """Every column of a Table in the canonical form of core.data.rows (rows by columns), or None when some column
    cannot be put in it, a row has another number of cells, or there is no row: what the people are keyed on."""
    if table.short or not table.n:
        return None
    columns = [canonical_column(c) if isinstance(c, tuple) else c if np.isfinite(c).all() else None
               for c in table.columns]
    return None if any(c is None for c in columns) else np.column_stack(columns)


def _parse(text: str, label: str, response: str = "y") -> Dataset:
    return table_dataset(csv_columns(text, label, response), label, response)


def table_dataset(table: Table, label: str, response: str = "y") -> Dataset:
    """A Table as a Dataset, `response` its label or response column and every other column a feature: the one step
    every format ends in. A defect is a DataError naming the columns, the kinds of problem and the rows, never a
    cell's value."""
    names = list(table.names)
    if response not in names:
        raise DataError(f"{label} has no column named {response!r} (columns: {', '.join(names)}); choose the label "
                        "column with {response}", "response")
    dupes = sorted({h for h in names if names.count(h) > 1})
    if dupes:
        raise DataError(f"{label} repeats the column name(s) {', '.join(dupes)}; give every column a unique name")
    yi = names.index(response)
    rows = table.rows or range(1, table.n + 1)
    values, found = [], []
    for j, column in enumerate(table.columns):
        numbers, kinds = _column(column, j == yi, table.nan)
        values.append(numbers)
        found += [((names[j], kind), [rows[i] for i in where], j) for kind, where in kinds.items()]
    if found or table.short:
        found.sort(key=lambda f: (f[1][0], f[2]))  # as a reader meets them: by row, then column
        raise DataError(_problems(label, {k: rs for k, rs, _ in found}, list(table.short), len(names)))
    if table.n == 0:
        raise DataError(f"{label} has a header but no data rows")
    features = [j for j in range(len(names)) if j != yi]
    return Dataset(
        X=np.column_stack([values[j] for j in features]) if features else np.empty((table.n, 0)),
        y=values[yi].copy(),
        feature_names=tuple(names[j] for j in features),
        source=label,
    )


def _column(column: np.ndarray | tuple[str, ...], is_label: bool, nan: str) -> tuple[np.ndarray, dict[str, list]]:
    """A column's numbers and where each kind of problem is (row indices from 0)."""
    if not isinstance(column, tuple):
        numbers = np.asarray(column, dtype=np.float64)
        lost = np.isnan(numbers) if nan == "missing" else np.zeros(numbers.shape, dtype=bool)
        odd = ~np.isfinite(numbers) & ~lost
        return numbers, {kind: np.flatnonzero(bad).tolist() for kind, bad in (("missing", lost), ("nonfinite", odd))
                         if bad.any()}
    cells = [_number(c, is_label) for c in column]
    kinds: dict[str, list] = {}
    for i, (_, kind) in enumerate(cells):
        if kind is not None:
            kinds.setdefault(kind, []).append(i)
    return np.array([v for v, _ in cells], dtype=np.float64), kinds


MAX_LISTED = 6  # problems named in one message; the rest are counted


KINDS = {"missing": "is missing (an empty cell)", "text": "holds text, not a number",
         "nonfinite": "holds a NaN or infinite value"}


def _problems(label: str, found: dict[tuple[str, str], list[int]], short: list[tuple[int, int]], width: int) -> str:
    """Every problem of the file in one message, the most frequent first."""
    parts = [f"column {name!r} {KINDS[kind]} in {_rows(rs)}"
             for (name, kind), rs in sorted(found.items(), key=lambda kv: -len(kv[1]))]
    if short:
        parts.append(f"{_rows([r for r, _ in short])} {'has' if len(short) == 1 else 'have'} a number of values other "
                     f"than the header's {width}")
    more = f"; and {len(parts) - MAX_LISTED} more" if len(parts) > MAX_LISTED else ""
    listed = "; ".join(parts[:MAX_LISTED]) + more
    fixes = []
    if any(kind in ("missing", "nonfinite") for _, kind in found):
        fixes.append("impute or remove the rows with missing values")
    if any(kind == "text" for _, kind in found):
        fixes.append("encode categories as 0/1 indicator columns")
    if short:
        fixes.append("give every row one value per column")
    problem = "a problem" if len(parts) == 1 else f"{len(parts)} problems"
    return f"{label} has {problem}: {listed}. To use it, {' and '.join(fixes)}"


def _rows(rs: list[int]) -> str:
    return f"data row {rs[0]}" if len(rs) == 1 else f"{len(rs)} data rows (the first is row {rs[0]})"


def _number(cell: str, is_label: bool) -> tuple[float, str | None]:
    """A cell's value, or NaN with what is wrong with it (the value itself is never quoted: a message must not
    publish a cell of the data)."""
    text = cell.strip()
    if is_label and text.casefold() in LABEL_WORDS:
        return LABEL_WORDS[text.casefold()], None
    if not text:
        return math.nan, "missing"
    try:
        value = float(text)
    except ValueError:
        return math.nan, "text"
    return value, None if math.isfinite(value) else "nonfinite"
