"""A data set larger than memory: a folder of Parquet (or CSV) files, checked to agree, read a range of rows at a time.

core.estimator.blocks cuts the rows into blocks and runs every pass of a release as a task per block.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import check_more_rows
from core.errors import DataError

Array = NDArray[np.float64]
BLOCK_ROWS = 2**19  # rows per block: 75 MB of 17 features and a response, a few of them per worker in flight


@dataclass(frozen=True)
class Part:
    """One file of a folder: its path, rows, and size and time of change when it was opened (a file that changes
    during the passes is refused)."""

    path: str
    rows: int
    size: int
    changed: int


@dataclass(frozen=True)
class Folder:
    """The Parquet or CSV files of a data set in name order, checked to share the columns read: features and a
    response, all numeric."""

    root: str
    parts: tuple[Part, ...]
    features: tuple[str, ...]
    response: str

    @property
    def n(self) -> int:
        return sum(p.rows for p in self.parts)

    def read(self, start: int, stop: int, features: bool = True) -> tuple[Array, Array]:
        """Rows [start, stop) as float64 arrays (X of d columns, or of none when not `features`, and y)."""
        table = self.columns(start, stop, (self.features if features else ()) + (self.response,))
        return np.ascontiguousarray(table[:, :-1]), np.ascontiguousarray(table[:, -1])

    def columns(self, start: int, stop: int, names: tuple[str, ...]) -> Array:
        """Rows [start, stop) of the named columns, side by side, as float64."""
        pieces, offset = [], 0
        for part in self.parts:
            a, b = max(start, offset), min(stop, offset + part.rows)
            if a < b:
                pieces.append(_read_part(part, a - offset, b - offset, names))
            offset += part.rows
        return np.concatenate(pieces) if len(pieces) > 1 else pieces[0]


def _read_part(part: Part, start: int, stop: int, columns: tuple[str, ...]) -> Array:
    """Rows [start, stop) of one file, the given columns side by side; DataError if the file changed or vanished."""
    import pyarrow as pa

    name, text = Path(part.path).name, part.path.endswith(".csv")
    try:
        stat = os.stat(part.path)
        if (stat.st_size, stat.st_mtime_ns) != (part.size, part.changed):
            raise FileNotFoundError
        table = (_csv_rows if text else _parquet_rows)(part.path, start, stop, columns)
    except pa.ArrowInvalid as e:
        if text:  # a cell that is not a number: its column, never its value
            raise DataError(f"column {_csv_column(part.path, str(e))} of {name} has a cell that is not a number; "
                            "write it as a number, or leave the column out with --features") from None
        raise _changed(name, e) from None
    except (OSError, ValueError) as e:
        raise _changed(name, e) from None
    out = np.empty((stop - start, len(columns)))
    for j, column in enumerate(columns):
        values = table.column(column)
        if values.null_count:
            raise DataError(f"column {column} of {name} has a missing cell; remove or impute those rows")
        out[:, j] = values.to_numpy()
    return out


def _changed(name: str, e: Exception) -> DataError:
    return DataError(f"the file {name} changed, vanished or could not be read while the data set was read "
                     f"({type(e).__name__}); nothing was released: restore it and run again")


def _parquet_rows(path: str, start: int, stop: int, columns: tuple[str, ...]) -> object:
    """Rows [start, stop) of a Parquet file: the row groups that hold them, sliced."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    groups, first, offset = [], 0, 0
    for g in range(file.num_row_groups):
        rows = file.metadata.row_group(g).num_rows
        if offset < stop and offset + rows > start:
            first = offset if not groups else first
            groups.append(g)
        offset += rows
    return file.read_row_groups(groups, columns=list(columns)).slice(start - first, stop - start)


def _csv_rows(path: str, start: int, stop: int, columns: tuple[str, ...]) -> object:
    """Rows [start, stop) of a CSV file with a header, read from its start (a CSV has no index), as float64."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    options = pacsv.ConvertOptions(column_types={c: pa.float64() for c in columns}, include_columns=list(columns))
    pieces, offset = [], 0
    for batch in pacsv.open_csv(path, convert_options=options):
        rows = batch.num_rows
        if offset + rows > start:
            a = max(start - offset, 0)
            pieces.append(batch.slice(a, min(stop - offset, rows) - a))
        offset += rows
        if offset >= stop:
            break
    return pa.Table.from_batches(pieces, schema=pa.schema([(c, pa.float64()) for c in columns]))


def _csv_header(path: Path | str) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return next(csv.reader(f), [])


def _csv_column(path: str, error: str) -> str:
    """The name of the column a CSV conversion error points at ("column #k"), or "a column" when it does not say."""
    found = re.search(r"column #(\d+)", error)
    try:
        names = _csv_header(path)
    except (OSError, UnicodeDecodeError, csv.Error):
        return "a column"
    return names[int(found.group(1))] if found and int(found.group(1)) < len(names) else "a column"


def open_folder(root: str | os.PathLike, response: str | None = "y",
                features: tuple[str, ...] | None = None) -> Folder:
    """The Parquet files of `root` (its *.parquet, in name order), or its CSV files (*.csv, each with a header, every
    cell read a number), checked to agree: every file has the response and the features (default: every other column
    of the first file), Parquet's with the same numeric types. With no response, the first file's last column stands
    as one, so that every column is read (as for a key, where no column is singled out)."""
    folder = Path(root).resolve()  # workers on other machines read the same absolute path
    kinds = [sorted(folder.glob(f"*{ext}")) if folder.is_dir() else [] for ext in (".parquet", ".csv")]
    if all(kinds):
        raise DataError(f"{root} holds both Parquet and CSV files; keep the files of one data set, of one kind")
    paths = kinds[0] or kinds[1]
    if not paths:
        raise DataError(f"no Parquet (*.parquet) or CSV (*.csv) files in {root}; check the folder passed to --folder")
    parts, first = [], None
    for path in paths:
        names, types, rows = _describe(path, root)
        twice = next((c for c in names if names.count(c) > 1), None)
        if twice is not None or not names:
            raise DataError(f"{path.name} has no header" if not names else
                            f"{path.name} names column {twice} twice; give every column its own name")
        if first is None:
            first = types
            response = names[-1] if response is None else response
            if response not in names:
                raise DataError(f"{path.name} has no column {response}; name the response column in {{response}}",
                                "response")
            features = tuple(c for c in names if c != response) if features is None else features
            for column in (*features, response):
                _check_column(types, column, path.name)
        for column in (*features, response):
            if column not in types or types[column] != first[column]:
                raise DataError(f"the files of {root} disagree: {path.name} lacks column {column} or gives it another "
                                f"type than {paths[0].name}; write every file with the same columns")
        stat = path.stat()
        parts.append(Part(str(path), rows, stat.st_size, stat.st_mtime_ns))
    read = Folder(str(folder), tuple(parts), tuple(features), response)
    check_more_rows(read.n, len(read.features))
    return read


def _describe(path: Path, root: str | os.PathLike) -> tuple[list[str], dict[str, object], int]:
    """A file's column names, their types (a CSV's are all numbers, checked as they are read) and its rows."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    try:
        if path.suffix == ".csv":
            names = _csv_header(path)
            if not names:
                return [], {}, 0
            options = pacsv.ConvertOptions(column_types={names[0]: pa.string()}, include_columns=names[:1])
            rows = sum(batch.num_rows for batch in pacsv.open_csv(path, convert_options=options))
            return names, dict.fromkeys(names, pa.float64()), rows
        schema = pq.read_schema(path)
        return schema.names, {f.name: f.type for f in schema}, pq.ParquetFile(path).metadata.num_rows
    except (OSError, UnicodeDecodeError, csv.Error, pa.ArrowException):
        raise DataError(f"{path.name} in {root} is not a readable {'CSV' if path.suffix == '.csv' else 'Parquet'} "
                        "file; remove it or write it again") from None


def _check_column(types: dict[str, object], column: str, name: str) -> None:
    import pyarrow as pa

    if column not in types:
        raise DataError(f"{name} has no column {column}; check --features")
    kind = types[column]
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        raise DataError(f"column {column} of {name} is not numeric; encode it as numbers first")
