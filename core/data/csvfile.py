"""A user's CSV file: a header, a column `y` (label or response), every other column a numeric feature."""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from pathlib import Path

import numpy as np

from core.data.dataset import Dataset
from core.errors import DataError

_BOOLS = {"true": 1.0, "false": 0.0}


def read_csv(path: str | os.PathLike) -> Dataset:
    """Read FILE.csv into a Dataset; any defect is a DataError that names the row and column."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file not found: {path}; check the path passed to {{data}}", setting="data")
    return _parse(path.read_text(encoding="utf-8-sig"), str(path))


def read_csv_bytes(content: bytes, name: str) -> Dataset:
    """The same for an uploaded file's bytes."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name} is not a text CSV file") from None
    return _parse(text, name)


def _parse(text: str, label: str) -> Dataset:
    header = next(csv.reader(io.StringIO(text)), None)
    if not header or not any(h.strip() for h in header):
        raise DataError(f"{label} is empty; it needs a header line with a column named y")
    names = [h.strip() for h in header]
    if "y" not in names:
        raise DataError(f"{label} has no column named y (columns: {', '.join(names)}); name the label column y")
    dupes = sorted({h for h in names if names.count(h) > 1})
    if dupes:
        raise DataError(f"{label} repeats the column name(s) {', '.join(dupes)}; give every column a unique name")
    yi = names.index("y")
    try:
        with warnings.catch_warnings():  # a header-only file is reported below, in words
            warnings.simplefilter("ignore", UserWarning)
            data = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError:
        data = _read_slowly(text, names, yi, label)
    if data.shape[0] == 0:
        raise DataError(f"{label} has a header but no data rows")
    if data.shape[1] != len(names):
        raise DataError(f"{label} has {len(names)} header names but {data.shape[1]} values per row")
    bad = ~np.isfinite(data)
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise DataError(
            f"{label}: column {names[col]!r} has a NaN or infinite value at data row {row + 1}; "
            "remove or impute such rows"
        )
    features = [j for j in range(len(names)) if j != yi]
    return Dataset(
        X=np.ascontiguousarray(data[:, features]),
        y=data[:, yi].copy(),
        feature_names=tuple(names[j] for j in features),
        source=label,
    )


def _read_slowly(text: str, names: list[str], yi: int, label: str) -> np.ndarray:
    """The careful reader behind the fast one: finds the offending cell, accepts true/false labels."""
    rows = []
    reader = csv.reader(io.StringIO(text))
    next(reader)
    for r, cells in enumerate(reader, start=1):
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            raise DataError(f"{label}: data row {r} has {len(cells)} values but the header has {len(names)} columns")
        rows.append([_number(c, r, names[j], label, j == yi) for j, c in enumerate(cells)])
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(names))


def _number(cell: str, row: int, name: str, label: str, is_label: bool) -> float:
    text = cell.strip()
    if is_label and text.lower() in _BOOLS:
        return _BOOLS[text.lower()]
    try:
        value = float(text)
    except ValueError:
        # The value itself is never quoted: an error message must not publish a cell of the data.
        what = "is empty" if not text else "holds a non-numeric (text) value"
        raise DataError(
            f"{label}: column {name!r} {what} at data row {row}; every column must be numeric "
            "(encode categories as 0/1 indicator columns)"
        ) from None
    if not math.isfinite(value):
        raise DataError(
            f"{label}: column {name!r} has a NaN or infinite value at data row {row}; remove or impute such rows"
        )
    return value
