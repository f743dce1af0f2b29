"""A user's CSV file: a header, a response column (label or response; `y` unless another is named), every other
column a numeric feature."""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
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


def csv_table(text: str) -> np.ndarray | None:
    """Every column of a CSV's text (its header skipped) in the canonical form of core.data.rows (rows by columns),
    or None when some column cannot be put in it, a row has another number of cells than the header, or there is no
    row: what the people of a CSV are keyed on."""
    sep = delimiter(text)
    with warnings.catch_warnings():  # a header-only file is None below
        warnings.simplefilter("ignore", UserWarning)
        try:
            table = np.loadtxt(io.StringIO(text), delimiter=sep, skiprows=1, dtype=np.float64, ndmin=2)
        except ValueError:
            table = None
    if table is not None:
        return table if table.shape[0] and np.isfinite(table).all() else None
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    width = len(next(reader, []))
    rows = [r for r in reader if any(c.strip() for c in r)]
    if not rows or width == 0 or any(len(r) != width for r in rows):
        return None
    columns = [canonical_column(c) for c in zip(*rows, strict=True)]
    return None if any(c is None for c in columns) else np.column_stack(columns)


def _parse(text: str, label: str, response: str = "y") -> Dataset:
    sep = delimiter(text)
    header = next(csv.reader(io.StringIO(text), delimiter=sep), None)
    if not header or not any(h.strip() for h in header):
        raise DataError(f"{label} is empty; it needs a header line with a column named {response}")
    names = [h.strip() for h in header]
    if response not in names:
        raise DataError(f"{label} has no column named {response!r} (columns: {', '.join(names)}); choose the label "
                        "column with {response}", "response")
    dupes = sorted({h for h in names if names.count(h) > 1})
    if dupes:
        raise DataError(f"{label} repeats the column name(s) {', '.join(dupes)}; give every column a unique name")
    yi = names.index(response)
    try:
        with warnings.catch_warnings():  # a header-only file is reported below, in words
            warnings.simplefilter("ignore", UserWarning)
            data = np.loadtxt(io.StringIO(text), delimiter=sep, skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError:
        data = _read_slowly(text, names, yi, label, sep)
    if data.shape[0] == 0:
        raise DataError(f"{label} has a header but no data rows")
    if data.shape[1] != len(names):
        raise DataError(f"{label} has {len(names)} header names but {data.shape[1]} values per row")
    bad = ~np.isfinite(data)
    if bad.any():
        found = {(names[j], "nonfinite"): [int(i) + 1 for i in np.flatnonzero(bad[:, j])]
                 for j in range(len(names)) if bad[:, j].any()}
        raise DataError(_problems(label, found, [], len(names)))
    features = [j for j in range(len(names)) if j != yi]
    return Dataset(
        X=np.ascontiguousarray(data[:, features]),
        y=data[:, yi].copy(),
        feature_names=tuple(names[j] for j in features),
        source=label,
    )


MAX_LISTED = 6  # problems named in one message; the rest are counted


def _read_slowly(text: str, names: list[str], yi: int, label: str, sep: str) -> np.ndarray:
    """The careful reader behind the fast one: accepts a label's words (core.data.rows.LABEL_WORDS), and finds every
    offending cell, reported together (by column and kind, with how many rows and the first; never a cell's value)."""
    rows, short = [], []
    found: dict[tuple[str, str], list[int]] = {}
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    next(reader)
    for r, cells in enumerate(reader, start=1):
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            short.append((r, len(cells)))
            continue
        row = []
        for j, c in enumerate(cells):
            value, kind = _number(c, j == yi)
            if kind is not None:
                found.setdefault((names[j], kind), []).append(r)
            row.append(value)
        rows.append(row)
    if found or short:
        raise DataError(_problems(label, found, short, len(names)))
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(names))


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
